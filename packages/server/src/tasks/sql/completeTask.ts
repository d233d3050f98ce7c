import { fromStored, type Queryable, toStored } from '@imagegen/db';
import type { TaskResult } from '../types.ts';
import { TASK_COLUMNS, type TaskRow } from './task-row.ts';

/** Marks the task succeeded, only while this claim still holds it (exactly-once completion). */
export async function completeTask(
  db: Queryable,
  params: { id: string; leaseOwner: string; result: TaskResult; outputKeys: readonly string[] },
): Promise<TaskRow | null> {
  const result = await db.query<TaskRow>({
    name: 'completeTask',
    text: `UPDATE tasks SET state = 'succeeded', result = $3, output_keys = $4, error = NULL, progress = 1,
             finished_at = now(), lease_owner = NULL, lease_expires_at = NULL
           WHERE id = $1 AND lease_owner = $2 AND state = 'running'
           RETURNING ${TASK_COLUMNS}`,
    values: [params.id, params.leaseOwner, JSON.stringify(toStored(params.result)), params.outputKeys],
  });
  return fromStored(result.rows[0] ?? null);
}
