import type { Queryable } from '@imagegen/db';

/** Forgets up to `limit` usage records of tasks finished before `cutoff`, oldest first; answers how many. */
export async function deleteExpiredUsage(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  const result = await db.query({
    name: 'deleteExpiredUsage',
    text: `DELETE FROM task_usage WHERE task_id IN (
             SELECT task_id FROM task_usage WHERE finished_at < $1
             ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    values: [cutoff, limit],
  });
  return result.rowCount ?? 0;
}
