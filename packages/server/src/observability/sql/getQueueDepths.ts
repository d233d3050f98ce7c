import type { Queryable } from '@imagegen/db';

/** The queued tasks of one routing pool ('shared', 'owner:<uuid>' or 'server:<id>'). */
export interface QueueDepth {
  route: string;
  tasks: number;
  /** Seconds since the oldest of them was queued. */
  oldest_seconds: number;
}

/**
 * The queue's size and age per routing pool, for /metrics: one pass over the claim's own partial
 * index (tasks_queued), whose leading column is the route.
 */
export async function getQueueDepths(db: Queryable): Promise<QueueDepth[]> {
  const result = await db.query<QueueDepth>({
    name: 'getQueueDepths',
    text: `SELECT route, count(*)::int AS tasks,
             extract(epoch FROM now() - min(created_at))::float8 AS oldest_seconds
           FROM tasks WHERE state = 'queued'
           GROUP BY route`,
  });
  return result.rows;
}
