import type { Queryable } from '@imagegen/db';

/** What a redelivery found: no such delivery of the owner's, one still pending, or one now due again. */
export type RedeliverOutcome = 'missing' | 'pending' | 'redelivered';

/**
 * Makes a delivered or failed delivery due again, now, and wakes the dispatchers when the
 * statement commits. The attempt count carries on, so the next attempt is recorded under a new
 * number. A pending delivery is left alone: its next attempt is planned, and may be in flight.
 */
export async function redeliverDelivery(
  db: Queryable,
  params: { ownerId: string; id: string },
): Promise<RedeliverOutcome> {
  const result = await db.query<{ state: string; redelivered: boolean }>({
    name: 'redeliverWebhookDelivery',
    text: `WITH target AS (
             SELECT id, state FROM webhook_deliveries WHERE id = $1 AND owner_id = $2 FOR UPDATE
           ), redelivered AS (
             UPDATE webhook_deliveries d
             SET state = 'pending', next_attempt_at = now(), finished_at = NULL
             FROM target WHERE d.id = target.id AND target.state <> 'pending'
             RETURNING d.id
           )
           SELECT t.state, r.id IS NOT NULL AS redelivered,
             CASE WHEN r.id IS NOT NULL THEN pg_notify('imagegen_webhooks', '') END AS notified
           FROM target t LEFT JOIN redelivered r ON true`,
    values: [params.id, params.ownerId],
  });
  const row = result.rows[0];
  if (!row) return 'missing';
  return row.redelivered ? 'redelivered' : 'pending';
}
