import { fromStored, type Queryable, toStored } from '@imagegen/db';
import { MODEL_COLUMNS, type ModelRow } from './model-row.ts';

/** One of the owner's models by its public model_id; another owner's reads as missing. */
export async function getModel(db: Queryable, ownerId: string, modelId: string): Promise<ModelRow | null> {
  const { rows } = await db.query<ModelRow>({
    name: 'getModel',
    text: `SELECT ${MODEL_COLUMNS} FROM models WHERE owner_id = $1 AND model_id = $2`,
    values: [ownerId, toStored(modelId)],
  });
  return fromStored(rows[0] ?? null);
}
