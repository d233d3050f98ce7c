import { fromStored, type Queryable } from '@imagegen/db';

/** One failed attempt of a task, as `failTask` and `reclaimExpired` record it. */
export interface AttemptError {
  attempt: number;
  error: string;
  /** When it failed (ISO 8601, as PostgreSQL writes a timestamp in JSON). */
  at: string;
}

export interface FailedTask {
  id: string;
  owner_id: string;
  pipeline: string;
  kind: string;
  attempts: number;
  /** The last attempt's error: what the task's status answers. */
  error: string | null;
  attempt_errors: AttemptError[];
  created_at: Date;
  finished_at: Date;
}

/**
 * Tasks that failed their last attempt (not cancelled ones) since a time, newest first, with every
 * attempt's error: the operator's listing, over the failed tasks' own index.
 */
export async function listFailedTasks(
  db: Queryable,
  params: { since: Date; pipeline: string | null; limit: number },
): Promise<FailedTask[]> {
  const result = await db.query<FailedTask>({
    name: 'listFailedTasks',
    text: `SELECT id, owner_id, endpoint AS pipeline, kind, attempts, error, attempt_errors, created_at, finished_at
           FROM tasks
           WHERE state = 'failed' AND cancelled_at IS NULL AND finished_at >= $1
             AND ($2::text IS NULL OR endpoint = $2)
           ORDER BY finished_at DESC
           LIMIT $3`,
    values: [params.since, params.pipeline, params.limit],
  });
  return fromStored(result.rows);
}
