import type { Queryable } from '../../db/pool.ts';

/** Points a model row at the task that registers it. */
export async function setModelTask(db: Queryable, modelRowId: string, taskId: string): Promise<void> {
  await db.query({
    name: 'setModelTask',
    text: 'UPDATE models SET task_id = $2 WHERE id = $1',
    values: [modelRowId, taskId],
  });
}
