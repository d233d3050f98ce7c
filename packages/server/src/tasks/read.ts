import { isUuid, type Queryable } from '@imagegen/db';
import { getTaskForOwner as selectTaskForOwner } from './sql/getTaskForOwner.ts';
import { listBatchTasks } from './sql/listBatchTasks.ts';
import { toTaskRecord } from './sql/task-row.ts';
import type { TaskRecord } from './types.ts';

/** The owner's task, or null for a missing id, a malformed id and another owner's id alike. */
export async function getTaskForOwner(
  db: Queryable,
  ownerId: string,
  id: string,
): Promise<TaskRecord | null> {
  if (!isUuid(id)) return null;
  const row = await selectTaskForOwner(db, ownerId, id);
  return row ? toTaskRecord(row) : null;
}

/** The owner's tasks of one batch, in submission order (empty for another owner's batch). */
export async function listBatch(db: Queryable, ownerId: string, batchId: string): Promise<TaskRecord[]> {
  return (await listBatchTasks(db, ownerId, batchId)).map(toTaskRecord);
}
