import type { Queryable } from '@imagegen/db';

/** Queued tasks of one route and owner created at one instant (one group commit inserts many). */
export interface QueuedRun {
  route: string;
  owner_id: string;
  /** created_at as epoch milliseconds, exactly as getTaskStatusesByIds reads it. */
  created_ms: number;
  tasks: number;
}

/**
 * The whole queue in order, compressed: one row per route, owner and creation instant, walked on
 * the claim's own index (tasks_queued). What queue positions are counted from (queue-estimates.ts).
 */
export async function getQueuedRuns(db: Queryable): Promise<QueuedRun[]> {
  const result = await db.query<QueuedRun>({
    name: 'getQueuedRuns',
    text: `SELECT route, owner_id, date_part('epoch', created_at) * 1000 AS created_ms, count(*)::int AS tasks
           FROM tasks WHERE state = 'queued'
           GROUP BY route, owner_id, created_at
           ORDER BY route, owner_id, created_at`,
  });
  return result.rows;
}
