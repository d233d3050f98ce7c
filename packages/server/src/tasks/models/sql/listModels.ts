import { fromStored, type Queryable } from '@imagegen/db';
import { MODEL_COLUMNS, type ModelRow } from './model-row.ts';

/** The owner's models that did not fail to load, newest first. */
export async function listModels(db: Queryable, ownerId: string): Promise<ModelRow[]> {
  const { rows } = await db.query<ModelRow>({
    name: 'listModels',
    text: `SELECT ${MODEL_COLUMNS} FROM models WHERE owner_id = $1 AND status <> 'failed'
            ORDER BY creation_timestamp DESC, id`,
    values: [ownerId],
  });
  return fromStored(rows);
}
