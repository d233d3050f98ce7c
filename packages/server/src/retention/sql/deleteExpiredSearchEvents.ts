import type { Queryable } from '@imagegen/db';

/** Forgets up to `limit` docs search insights events received before `cutoff`, oldest first; answers how many. */
export async function deleteExpiredSearchEvents(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const result = await db.query({
    name: 'deleteExpiredSearchEvents',
    text: `DELETE FROM search_events WHERE id IN (
             SELECT id FROM search_events WHERE received_at < $1
             ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    values: [cutoff, limit],
  });
  return result.rowCount ?? 0;
}
