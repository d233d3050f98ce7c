import type { Queryable } from '@imagegen/db';

/** Forgets up to `limit` docs page views that happened before `cutoff`, oldest first; answers how many. */
export async function deleteExpiredAnalyticsEvents(
  db: Queryable,
  cutoff: Date,
  limit: number,
): Promise<number> {
  const result = await db.query({
    name: 'deleteExpiredAnalyticsEvents',
    text: `DELETE FROM analytics_events WHERE id IN (
             SELECT id FROM analytics_events WHERE occurred_at < $1
             ORDER BY occurred_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    values: [cutoff, limit],
  });
  return result.rowCount ?? 0;
}
