import type { Queryable } from '@imagegen/db';

/** Forgets up to `limit` webhook attempts made before `cutoff`, oldest first; answers how many. */
export async function deleteExpiredWebhookAttempts(
  db: Queryable,
  cutoff: Date,
  limit: number,
): Promise<number> {
  const result = await db.query({
    name: 'deleteExpiredWebhookAttempts',
    text: `DELETE FROM webhook_attempts WHERE id IN (
             SELECT id FROM webhook_attempts WHERE started_at < $1
             ORDER BY started_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    values: [cutoff, limit],
  });
  return result.rowCount ?? 0;
}
