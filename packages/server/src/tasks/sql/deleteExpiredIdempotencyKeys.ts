import type { Queryable } from '@imagegen/db';

/**
 * Forgets up to `limit` Idempotency-Keys taken before `cutoff` (24 hours before the sweep: such a
 * key is free again, see claimIdempotencyKey), oldest first; answers how many. Keys another sweep
 * is deleting are skipped.
 */
export async function deleteExpiredIdempotencyKeys(
  db: Queryable,
  cutoff: Date,
  limit: number,
): Promise<number> {
  const result = await db.query({
    name: 'deleteExpiredIdempotencyKeys',
    text: `DELETE FROM idempotency_keys WHERE ctid IN (
             SELECT ctid FROM idempotency_keys WHERE created_at < $1
             ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    values: [cutoff, limit],
  });
  return result.rowCount ?? 0;
}
