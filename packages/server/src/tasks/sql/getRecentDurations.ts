import type { Queryable } from '@imagegen/db';

export interface RecentDuration {
  endpoint: string;
  /** Mean run time in seconds of the pipeline's last successes (null: none in the last day). */
  seconds: number | null;
}

/**
 * How long each pipeline's tasks ran lately: the mean of its last 20 successes of the past day,
 * from claim to completion of the attempt that succeeded (tasks_recent_successes).
 */
export async function getRecentDurations(
  db: Queryable,
  endpoints: readonly string[],
): Promise<RecentDuration[]> {
  const result = await db.query<RecentDuration>({
    name: 'getRecentDurations',
    text: `SELECT e.endpoint,
             (SELECT avg(extract(epoch from r.finished_at - r.started_at))::float8 FROM (
                SELECT t.finished_at, t.started_at FROM tasks t
                WHERE t.state = 'succeeded' AND t.endpoint = e.endpoint
                  AND t.finished_at > now() - interval '1 day'
                ORDER BY t.finished_at DESC LIMIT 20) r) AS seconds
           FROM unnest($1::text[]) AS e(endpoint)`,
    values: [endpoints],
  });
  return result.rows;
}
