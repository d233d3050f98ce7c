import type { Queryable } from '@imagegen/db';

/** The webhook calls waiting to be delivered (first tries and retries alike). */
export interface WebhookBacklog {
  pending: number;
  /** Seconds since the oldest of them was queued; 0 when none waits. */
  oldest_seconds: number;
}

/**
 * The webhook outbox's backlog, for /metrics: the pending deliveries through their partial index
 * (webhook_deliveries_due), so its cost follows the calls waiting, not the history kept.
 */
export async function getWebhookBacklog(db: Queryable): Promise<WebhookBacklog> {
  const result = await db.query<WebhookBacklog>({
    name: 'getWebhookBacklog',
    text: `SELECT count(*)::int AS pending,
             coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest_seconds
           FROM webhook_deliveries WHERE state = 'pending'`,
  });
  return result.rows[0] ?? { pending: 0, oldest_seconds: 0 };
}
