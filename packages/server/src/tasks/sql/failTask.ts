import { fromStored, type Queryable, toStored } from '@imagegen/db';
import { TASK_COLUMNS, type TaskRow } from './task-row.ts';

/**
 * After a failed attempt: back to the queue after `backoffMs` while attempts remain, unless the
 * error is `final` (bad input, no engine); otherwise FAILURE with this error. Either way the error
 * is added to the task's `attempt_errors`. Fenced by the claim.
 */
export async function failTask(
  db: Queryable,
  params: { id: string; leaseOwner: string; error: string; final: boolean; backoffMs: number },
): Promise<TaskRow | null> {
  const result = await db.query<TaskRow>({
    name: 'failTask',
    text: `UPDATE tasks SET
             state = CASE WHEN $4 OR attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
             finished_at = CASE WHEN $4 OR attempts >= max_attempts THEN now() END,
             run_at = now() + make_interval(secs => $5::double precision / 1000),
             error = $3, lease_owner = NULL, lease_expires_at = NULL,
             attempt_errors = attempt_errors ||
               jsonb_build_array(jsonb_build_object('attempt', attempts, 'error', $3::text, 'at', now()))
           WHERE id = $1 AND lease_owner = $2 AND state = 'running'
           RETURNING ${TASK_COLUMNS}`,
    values: [params.id, params.leaseOwner, toStored(params.error), params.final, params.backoffMs],
  });
  return fromStored(result.rows[0] ?? null);
}
