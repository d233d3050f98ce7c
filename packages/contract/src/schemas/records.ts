import Type from 'typebox';
import { BaseModel, Enum, Nullable, Visibility, WEBHOOK_EVENTS } from './common.ts';
import { MODEL_TYPES } from './models.ts';

/** Account and model records, and the designed batch and webhook-secret reads. */

const opt = Type.Optional;

export const PLANS = [
  'FREE',
  'TRIAL',
  'BASIC',
  'STANDARD',
  'SUPERCHARGE',
  'EPTRIAL',
  'EPBASIC',
  'EPSTANDARD',
  'EPPREMIUM',
  'WEEKLY',
  'MONTHLY',
  'UNLIMITED',
] as const;

/** The enterprise plans: they may route tasks to their own servers with `server_id`. */
export const ENTERPRISE_PLANS = [
  'EPTRIAL',
  'EPBASIC',
  'EPSTANDARD',
  'EPPREMIUM',
] as const satisfies readonly (typeof PLANS)[number][];

const timestamp = Type.String({ format: 'date-time' });

export const UserModel = Type.Object(
  {
    user_id: Type.String(),
    model_id: Type.String(),
    model_name: Type.String(),
    model_url: Nullable(Type.String()),
    pretrained_model_path: Nullable(Type.String()),
    base_model: BaseModel,
    model_type: Enum(MODEL_TYPES),
    description: Type.String(),
    tags: Type.String(),
    sample_images: Type.Array(Type.String()),
    images_generated: Type.Integer({ minimum: 0 }),
    invocations: Type.Integer({ minimum: 0 }),
    trigger_words: Nullable(Type.String()),
    trained_model: Type.Boolean(),
    verified: Type.Boolean(),
    nsfw: Type.Boolean(),
    creator_link: Nullable(Type.String()),
    donation_link: Nullable(Type.String()),
    creation_timestamp: timestamp,
    visibility: Visibility,
  },
  { title: 'UserModel' },
);

export const DeletedModel = Type.Object(
  { model_id: Type.String(), deleted: Type.Literal(true) },
  { title: 'DeletedModel', description: 'The model was deleted, with its files on the servers.' },
);

export const UserModelInfo = Type.Object(
  {
    model_id: Type.String(),
    model_name: Type.String(),
    base_model: BaseModel,
    model_type: Enum(MODEL_TYPES),
    tags: Type.String(),
    sample_images: Type.Array(Type.String()),
    verified: Type.Boolean(),
    visibility: Visibility,
  },
  { title: 'UserModelInfo' },
);

export const UserImage = Type.Object(
  {
    download_url: Type.String(),
    creation_timestamp: timestamp,
    model_id: Nullable(Type.String()),
    image_id: Type.String(),
  },
  { title: 'UserImage' },
);

export const ImageInfo = Type.Object(
  {
    image_id: Type.String(),
    user_id: Type.String(),
    model_id: Nullable(Type.String()),
    backblaze_file_id: Nullable(Type.String({ description: 'Storage key of the file.' })),
    download_url: Type.String(),
    json: Type.String({
      description:
        'The request that made the image, as JSON text (as the API validated it: defaults filled in, ' +
        'a seed of -1 replaced by the one drawn). Parse it to read `prompt`, `width`, `height`, ...',
    }),
    creation_timestamp: timestamp,
  },
  { title: 'ImageInfo' },
);

export const UserSubscription = Type.Object(
  {
    user_id: Type.String(),
    subscription_id: Type.String(),
    plan: Enum(PLANS),
    pod_id: opt(Nullable(Type.String({ description: 'Enterprise server id.' }))),
    pod_status: Type.String({ default: 'unknown' }),
    period_start: timestamp,
    period_end: timestamp,
    subscription_status: Type.String(),
  },
  { title: 'UserSubscription' },
);

/**
 * The account as the original service's frontend reads it at `GET /user/{id}`: the API reference
 * names no such record, so it has the fields that frontend reads which this API keeps (no e-mail,
 * no token or training allowances: plans here cap how many tasks run at once, nothing else).
 */
export const UserAccount = Type.Object(
  {
    user_id: Type.String(),
    api_key: Type.String({
      description:
        'The key this request was sent with (keys are stored as hashes only, so this is the one the API can show).',
    }),
    plan: Nullable(Enum(PLANS), { description: 'The plan of your active subscription; null without one.' }),
    plan_expiry_date: Nullable(
      Type.String({
        format: 'date-time',
        description: 'When that subscription ends; null when it has no end (or there is none).',
      }),
    ),
  },
  { title: 'UserAccount' },
);

export const UserSubscriptionList = Type.Array(UserSubscription, { title: 'UserSubscriptionList' });

export const UserModelList = Type.Array(UserModelInfo, { title: 'UserModelList' });

export const UserImageList = Type.Array(UserImage, { title: 'UserImageList' });

export const BatchTask = Type.Object(
  {
    id: Type.String(),
    path: Type.String(),
    status: Enum(['PENDING', 'SUCCESS', 'FAILURE'] as const),
    download_urls: opt(Nullable(Type.Array(Type.String()))),
    error: opt(Type.String()),
    created_at: timestamp,
  },
  { title: 'BatchTask' },
);

export const BatchTasks = Type.Object(
  { batch_id: Type.String(), tasks: Type.Array(BatchTask) },
  { title: 'BatchTasks' },
);

export const WebhookSecret = Type.Object(
  { secret: Type.String({ description: 'Standard Webhooks signing secret (whsec_...).' }) },
  { title: 'WebhookSecret' },
);

/** A task's state in the listing: the queue's states, with the tasks their caller cancelled apart. */
export const TASK_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

export const TaskListEntry = Type.Object(
  {
    id: Type.String(),
    pipeline: Type.String({ description: 'The path the task was submitted to, e.g. `/sd/text2image/v1`.' }),
    request: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'The request as the API validated it: defaults filled in, unknown fields dropped, a seed of -1 ' +
          'replaced by the one drawn. Submitting it again repeats the task.',
      },
    ),
    state: Enum(TASK_STATES),
    engine: Nullable(
      Type.String({
        description:
          'The engine that ran the task: `cpu` and `comfyui` compute real results, `sandbox` answers ' +
          'labelled placeholders. Null until an engine has run it.',
      }),
    ),
    placeholder: Type.Boolean({
      description:
        'true when the result is a labelled placeholder (the sandbox engine ran the task), not a real ' +
        'generation; a ComfyUI server (`COMFYUI_URLS`) draws real images.',
    }),
    batch_id: Nullable(Type.String()),
    created_at: timestamp,
    finished_at: Nullable(timestamp),
    status_path: Type.String({
      description: 'Where its status is read, e.g. `/sd/text2image/v1/status/{id}`.',
    }),
  },
  { title: 'TaskListEntry' },
);

export const TaskList = Type.Object(
  {
    tasks: Type.Array(TaskListEntry),
    next_cursor: Nullable(
      Type.String({ description: 'Pass it as `cursor` to read the next page; null on the last page.' }),
    ),
  },
  { title: 'TaskList' },
);

/** Where a webhook delivery stands: waiting for an attempt, answered with a 2xx, or given up. */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;

export const WebhookAttempt = Type.Object(
  {
    attempt: Type.Integer({ description: '1 for the first attempt; a redelivery adds the next number.' }),
    started_at: timestamp,
    duration_ms: Type.Integer(),
    status_code: Nullable(
      Type.Integer({
        description: "The receiver's HTTP status; null when no answer came (timeout, refused).",
      }),
    ),
    error: Nullable(Type.String({ description: 'Why the attempt failed; null when it delivered.' })),
  },
  { title: 'WebhookAttempt' },
);

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({
      description: 'The delivery id; the `webhook-id` header is `msg_` and this id without dashes.',
    }),
    task_id: Nullable(Type.String()),
    event: Enum(WEBHOOK_EVENTS),
    status: Enum(DELIVERY_STATES),
    created_at: timestamp,
    attempts: Type.Array(WebhookAttempt, {
      description: 'Oldest first; the newest 25 are kept (their numbers say how many came before).',
    }),
  },
  { title: 'WebhookDelivery' },
);

export const WebhookDeliveryList = Type.Object(
  {
    deliveries: Type.Array(WebhookDelivery, { description: 'Newest first.' }),
    next_cursor: Nullable(
      Type.String({ description: 'Pass it as `cursor` to read the next page; null on the last page.' }),
    ),
  },
  { title: 'WebhookDeliveryList' },
);

export const UsageRow = Type.Object(
  {
    day: Type.String({ description: 'The UTC day the tasks finished, `YYYY-MM-DD`.' }),
    pipeline: Type.String({ description: 'The path the tasks were submitted to.' }),
    tasks: Type.Integer({ description: 'Tasks that finished: `succeeded` + `failed`.' }),
    succeeded: Type.Integer(),
    failed: Type.Integer({ description: 'Failed tasks, the cancelled ones included.' }),
    images: Type.Integer({ description: 'Images the succeeded tasks produced.' }),
    pixels: Type.Integer({ description: 'Width × height summed over those images.' }),
    run_seconds: Type.Number({ description: 'From a worker starting each task to its end, summed.' }),
    queue_seconds: Type.Number({
      description: 'From each submission to a worker starting it (or its end), summed.',
    }),
  },
  { title: 'UsageRow' },
);

export const UsageReport = Type.Object(
  {
    from: Type.String({ description: 'The first day counted (UTC), `YYYY-MM-DD`.' }),
    to: Type.String({ description: 'The last day counted (UTC), `YYYY-MM-DD`.' }),
    rows: Type.Array(UsageRow, {
      description: 'One per day and pipeline with finished tasks, by day then pipeline.',
    }),
  },
  { title: 'UsageReport' },
);
