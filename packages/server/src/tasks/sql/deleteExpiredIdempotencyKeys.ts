import type { Queryable } from '@imagegen/db';

/**
 * Forgets a few keys older than 24 hours. Each idempotent submission sweeps some, so the table
 * holds about a day of keys without a cleaning job; keys another sweep is deleting are skipped.
 */
export async function deleteExpiredIdempotencyKeys(db: Queryable): Promise<void> {
  await db.query({
    name: 'deleteExpiredIdempotencyKeys',
    text: `DELETE FROM idempotency_keys WHERE ctid IN (
             SELECT ctid FROM idempotency_keys WHERE created_at < now() - interval '24 hours'
             ORDER BY created_at LIMIT 10 FOR UPDATE SKIP LOCKED)`,
  });
}
