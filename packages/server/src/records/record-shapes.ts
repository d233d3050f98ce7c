import type { SubscriptionRow } from '../auth/sql/insertSubscription.ts';
import type { ModelRow } from '../tasks/index.ts';
import type { ImageRow } from './sql/image-row.ts';

/** Database rows → the contract's record shapes. Timestamps are ISO 8601 strings. */

export function toUserModel(row: ModelRow) {
  return {
    user_id: row.owner_id,
    model_id: row.model_id,
    model_name: row.model_name,
    model_url: row.model_url,
    pretrained_model_path: row.pretrained_model_path,
    base_model: row.base_model,
    model_type: row.model_type,
    description: row.description,
    tags: row.tags,
    sample_images: row.sample_images,
    images_generated: row.images_generated,
    invocations: row.invocations,
    trigger_words: row.trigger_words,
    trained_model: row.trained_model,
    verified: row.verified,
    nsfw: row.nsfw,
    creator_link: row.creator_link,
    donation_link: row.donation_link,
    creation_timestamp: row.creation_timestamp.toISOString(),
    visibility: row.visibility,
  };
}

export function toUserModelInfo(row: ModelRow) {
  return {
    model_id: row.model_id,
    model_name: row.model_name,
    base_model: row.base_model,
    model_type: row.model_type,
    tags: row.tags,
    sample_images: row.sample_images,
    verified: row.verified,
    visibility: row.visibility,
  };
}

export function toUserImage(row: ImageRow) {
  return {
    download_url: row.download_url,
    creation_timestamp: row.creation_timestamp.toISOString(),
    model_id: row.model_id,
    image_id: row.id,
  };
}

export function toImageInfo(row: ImageRow) {
  return {
    image_id: row.id,
    user_id: row.owner_id,
    model_id: row.model_id,
    backblaze_file_id: row.blob_key,
    download_url: row.download_url,
    // The request that made the image, as JSON text: the original's frontend parses it for the
    // prompt and the size. The row keeps it beside its pipeline (`endpoint`) and seed.
    json: JSON.stringify(row.json.input ?? {}),
    creation_timestamp: row.creation_timestamp.toISOString(),
  };
}

/**
 * The account as `GET /user/{user_id}` answers it: its plan while a subscription is active, when
 * that ends (null when open-ended: the frontend then says it has no expiry), and the request's key.
 */
export function toUserAccount(ownerId: string, apiKey: string, subscription: SubscriptionRow | null) {
  const active = subscription?.status === 'active' ? subscription : null;
  return {
    user_id: ownerId,
    api_key: apiKey,
    plan: active?.plan ?? null,
    plan_expiry_date: active?.period_end?.toISOString() ?? null,
  };
}

/**
 * An open-ended subscription reports its period end as one month after its start, the way a
 * monthly billing period reads; UserSubscription requires the field.
 */
export function toUserSubscription(row: SubscriptionRow) {
  const end = row.period_end ?? new Date(addMonth(row.period_start));
  return {
    user_id: row.owner_id,
    subscription_id: row.id,
    plan: row.plan,
    pod_id: row.pod_id,
    pod_status: row.pod_status,
    period_start: row.period_start.toISOString(),
    period_end: end.toISOString(),
    subscription_status: row.status,
  };
}

function addMonth(date: Date): number {
  const next = new Date(date);
  next.setUTCMonth(next.getUTCMonth() + 1);
  return next.getTime();
}
