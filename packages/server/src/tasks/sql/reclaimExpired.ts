import { fromStored, type Queryable } from '@imagegen/db';
import { TASKS_DOT_COLUMNS, type TaskRow } from './task-row.ts';

/**
 * Tasks whose worker stopped renewing its lease (killed, frozen, cut off) go back to the queue,
 * or to FAILURE once their attempts are spent. Returns the rows it changed.
 */
export async function reclaimExpired(db: Queryable): Promise<TaskRow[]> {
  const result = await db.query<TaskRow>({
    name: 'reclaimExpired',
    text: `WITH expired AS (
             SELECT id,
               'the worker running attempt ' || attempts || ' stopped responding (lease expired)' AS error
             FROM tasks WHERE state = 'running' AND lease_expires_at < now()
             ORDER BY lease_expires_at LIMIT 100
             FOR UPDATE SKIP LOCKED
           )
           UPDATE tasks SET
             state = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
             finished_at = CASE WHEN attempts >= max_attempts THEN now() END,
             run_at = now(),
             error = expired.error, lease_owner = NULL, lease_expires_at = NULL,
             attempt_errors = tasks.attempt_errors ||
               jsonb_build_array(jsonb_build_object('attempt', tasks.attempts, 'error', expired.error, 'at', now()))
           FROM expired WHERE tasks.id = expired.id
           RETURNING ${TASKS_DOT_COLUMNS}`,
    values: [],
  });
  return fromStored(result.rows);
}
