import type { Queryable } from '../../db/pool.ts';
import { MODEL_COLUMNS, type ModelRow } from './model-row.ts';

/** The model a load_model or train_model task registers. */
export async function getModelByTask(
  db: Queryable,
  ownerId: string,
  taskId: string,
): Promise<ModelRow | null> {
  const { rows } = await db.query<ModelRow>({
    name: 'getModelByTask',
    text: `SELECT ${MODEL_COLUMNS} FROM models WHERE owner_id = $1 AND task_id = $2`,
    values: [ownerId, taskId],
  });
  return rows[0] ?? null;
}
