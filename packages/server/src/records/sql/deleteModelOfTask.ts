import type { Queryable } from '../../db/pool.ts';

/** Removes the model row registered for a task that was then refused (routing). */
export async function deleteModelOfTask(db: Queryable, ownerId: string, taskId: string): Promise<void> {
  await db.query({
    name: 'deleteModelOfTask',
    text: 'DELETE FROM models WHERE owner_id = $1 AND task_id = $2',
    values: [ownerId, taskId],
  });
}
