import { type Queryable, toStored } from '@imagegen/db';

/**
 * Puts failed generation tasks back in the queue with their attempts renewed, as if just
 * submitted (their id, request, seed and output links kept; `attempt_errors` kept as history).
 * Only tasks that failed on their own: a cancelled task stays cancelled, and a model task's model
 * has failed with it (its owner submits it again). Answers the ids it requeued.
 */
export async function requeueFailedTasks(db: Queryable, ids: readonly string[]): Promise<string[]> {
  const result = await db.query<{ id: string }>({
    name: 'requeueFailedTasks',
    text: `UPDATE tasks SET state = 'queued', attempts = 0, run_at = now(), error = NULL, result = NULL,
             progress = NULL, progress_message = NULL, started_at = NULL, finished_at = NULL
           WHERE id = ANY($1::uuid[]) AND state = 'failed' AND cancelled_at IS NULL AND kind = 'generation'
           RETURNING id`,
    values: [toStored(ids)],
  });
  return result.rows.map((row) => row.id);
}
