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
 * tasks_running_lease), so its cost follows the tasks waiting and running, not the history kept
 * (about 8 ms with 2,000 queued among 320,000 finished). The pipeline is read from the table, not
 * the index: with a backlog of a hundred thousand tasks the planner reads the whole table instead
 * (about 0.6 s on a busy machine), which the caller pays for by reusing the reading longer.
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
