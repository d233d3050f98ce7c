import type { Queryable } from '@imagegen/db';

export interface RunningCount {
  owner_id: string;
  route: string;
  running: number;
}

/** How many tasks run now, per owner and route: the claim's fairness, and how many slots a route has busy. */
export async function getRunningCounts(db: Queryable): Promise<RunningCount[]> {
  const result = await db.query<RunningCount>({
    name: 'getRunningCounts',
    text: `SELECT owner_id, route, count(*)::int AS running FROM tasks WHERE state = 'running'
           GROUP BY owner_id, route`,
  });
  return result.rows;
}
