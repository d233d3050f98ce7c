import type { Queryable } from '@imagegen/db';

/**
 * What a redelivery found: no such delivery of the owner's, one still pending (a redelivery is
 * already in flight, or its next attempt planned), an allowance used up (with the seconds until
 * the oldest redelivery it counts leaves its window), or one now due again.
 */
export type RedeliverOutcome =
  | { readonly kind: 'missing' }
  | { readonly kind: 'pending' }
  | { readonly kind: 'limited'; readonly scope: 'delivery' | 'owner'; readonly retryAfterSeconds: number }
  | { readonly kind: 'redelivered' };

export interface RedeliverParams {
  readonly ownerId: string;
  readonly id: string;
  /** Redeliveries of one delivery in any 24 hours. */
  readonly perDelivery: number;
  /** Redeliveries of one owner in any minute. */
  readonly perMinute: number;
}

/**
 * Makes a delivered or failed delivery due again, now, when its allowance and its owner's allow
 * it; records the redelivery and wakes the dispatchers when the statement commits. The attempt
 * count carries on, so the next attempt is recorded under a new number. A pending delivery is
 * left alone: its next attempt is planned, and may be in flight. Also removes the records of
 * redeliveries older than a day, everyone's: each call pays for what aged out since the last.
 * Run after lockOwnerRedeliveries, in its transaction.
 */
export async function redeliverDelivery(db: Queryable, params: RedeliverParams): Promise<RedeliverOutcome> {
  const result = await db.query<{
    state: string;
    redelivered: boolean;
    delivery_count: number;
    delivery_wait: number | null;
    owner_count: number;
    owner_wait: number | null;
  }>({
    name: 'redeliverWebhookDelivery',
    text: `WITH target AS (
             SELECT id, state FROM webhook_deliveries WHERE id = $1 AND owner_id = $2 FOR UPDATE
           ), aged AS (
             DELETE FROM webhook_redeliveries WHERE requested_at < now() - interval '1 day'
           ), by_delivery AS (
             SELECT count(*)::int AS n,
                    extract(epoch from min(requested_at) + interval '1 day' - now()) AS wait
             FROM webhook_redeliveries
             WHERE delivery_id = $1 AND requested_at >= now() - interval '1 day'
           ), by_owner AS (
             SELECT count(*)::int AS n,
                    extract(epoch from min(requested_at) + interval '1 minute' - now()) AS wait
             FROM webhook_redeliveries
             WHERE owner_id = $2 AND requested_at >= now() - interval '1 minute'
           ), allowed AS (
             SELECT t.id FROM target t, by_delivery d, by_owner o
             WHERE t.state <> 'pending' AND d.n < $3 AND o.n < $4
           ), recorded AS (
             INSERT INTO webhook_redeliveries (owner_id, delivery_id) SELECT $2, id FROM allowed
           ), redelivered AS (
             UPDATE webhook_deliveries d
             SET state = 'pending', next_attempt_at = now(), finished_at = NULL
             FROM allowed WHERE d.id = allowed.id
             RETURNING d.id
           )
           SELECT t.state, r.id IS NOT NULL AS redelivered,
             d.n AS delivery_count, d.wait AS delivery_wait, o.n AS owner_count, o.wait AS owner_wait,
             CASE WHEN r.id IS NOT NULL THEN pg_notify('imagegen_webhooks', '') END AS notified
           FROM target t CROSS JOIN by_delivery d CROSS JOIN by_owner o LEFT JOIN redelivered r ON true`,
    values: [params.id, params.ownerId, params.perDelivery, params.perMinute],
  });
  const row = result.rows[0];
  if (!row) return { kind: 'missing' };
  if (row.redelivered) return { kind: 'redelivered' };
  if (row.state === 'pending') return { kind: 'pending' };
  const seconds = (wait: number | null) => Math.max(1, Math.ceil(Number(wait ?? 1)));
  if (row.delivery_count >= params.perDelivery) {
    return { kind: 'limited', scope: 'delivery', retryAfterSeconds: seconds(row.delivery_wait) };
  }
  return { kind: 'limited', scope: 'owner', retryAfterSeconds: seconds(row.owner_wait) };
}
