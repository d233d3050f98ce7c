import { fromStored, type Queryable } from '@imagegen/db';
import { TASK_COLUMNS, type TaskRow } from './task-row.ts';

/** One task, only if it belongs to the owner: another owner's id reads exactly like a missing one. */
export async function getTaskForOwner(db: Queryable, ownerId: string, id: string): Promise<TaskRow | null> {
  const result = await db.query<TaskRow>({
    name: 'getTaskForOwner',
    text: `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 AND owner_id = $2`,
    values: [id, ownerId],
  });
  return fromStored(result.rows[0] ?? null);
}
