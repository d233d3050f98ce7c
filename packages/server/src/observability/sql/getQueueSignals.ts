import type { Queryable } from '@imagegen/db';

/** The queued or running tasks of one routing pool and pipeline. */
export interface QueueSignal {
  /** 'shared', 'owner:<uuid>' or 'server:<id>'. */
  route: string;
  /** The submission path. */
  pipeline: string;
  state: 'queued' | 'running';
  tasks: number;
  /** For queued tasks: seconds since the oldest of them was queued (0 for running ones). */
  oldest_seconds: number;
}

/**
 * The queue's size and age, and the tasks running, per routing pool and pipeline, for /metrics:
 * one statement of two passes, each over its state's partial index (tasks_queued,
 * tasks_running_lease), so its cost follows the tasks waiting and running, never the finished ones.
 */
export async function getQueueSignals(db: Queryable): Promise<QueueSignal[]> {
  const result = await db.query<QueueSignal>({
    name: 'getQueueSignals',
    text: `SELECT route, endpoint AS pipeline, 'queued' AS state, count(*)::int AS tasks,
             extract(epoch FROM now() - min(created_at))::float8 AS oldest_seconds
           FROM tasks WHERE state = 'queued'
           GROUP BY route, endpoint
           UNION ALL
           SELECT route, endpoint, 'running', count(*)::int, 0::float8
           FROM tasks WHERE state = 'running'
           GROUP BY route, endpoint`,
  });
  return result.rows;
}
