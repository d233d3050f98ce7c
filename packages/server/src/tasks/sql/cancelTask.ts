import type { Queryable } from '@imagegen/db';
import { TASK_COLUMNS, type TaskRow } from './task-row.ts';

/**
 * Ends the owner's queued or running task as cancelled: FAILURE with `error`, and its lease is
 * dropped, so a worker still running it can neither complete nor fail it (both are fenced by the
 * lease). A claim that took the row first is waited for: the cancel then ends a running task.
 * Null when the task is not the owner's or already ended.
 */
export async function cancelTask(
  db: Queryable,
  params: { id: string; ownerId: string; error: string },
): Promise<TaskRow | null> {
  const result = await db.query<TaskRow>({
    name: 'cancelTask',
    text: `UPDATE tasks SET state = 'failed', error = $3, cancelled_at = now(), finished_at = now(),
             lease_owner = NULL, lease_expires_at = NULL
           WHERE id = $1 AND owner_id = $2 AND state IN ('queued', 'running')
           RETURNING ${TASK_COLUMNS}`,
    values: [params.id, params.ownerId, params.error],
  });
  return result.rows[0] ?? null;
}
