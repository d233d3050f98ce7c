import { fromStored, type Queryable, toStored } from '@imagegen/db';
import { TASK_COLUMNS, type TaskRow } from './task-row.ts';

/** The owner's tasks submitted with this batch_id, oldest first. */
export async function listBatchTasks(db: Queryable, ownerId: string, batchId: string): Promise<TaskRow[]> {
  const result = await db.query<TaskRow>({
    name: 'listBatchTasks',
    text: `SELECT ${TASK_COLUMNS} FROM tasks WHERE owner_id = $1 AND batch_id = $2 ORDER BY created_at, id`,
    values: [ownerId, toStored(batchId)],
  });
  return fromStored(result.rows);
}
