import type { Queryable } from '@imagegen/db';

/** Forgets a task's preview: its attempt ended, and its status now says more. */
export async function deleteTaskPreview(db: Queryable, taskId: string): Promise<void> {
  await db.query({
    name: 'deleteTaskPreview',
    text: 'DELETE FROM task_previews WHERE task_id = $1',
    values: [taskId],
  });
}
