import { fromStored, type Queryable, toStored } from '@imagegen/db';

/** Deletes one of the owner's models (its syncs go with it); answers what its files are named by. */
export async function deleteModel(
  db: Queryable,
  ownerId: string,
  modelId: string,
): Promise<{
  model_id: string;
  model_type: string;
  base_model: string;
  model_extension: string | null;
} | null> {
  const { rows } = await db.query({
    name: 'deleteModel',
    text: `DELETE FROM models WHERE owner_id = $1 AND model_id = $2
           RETURNING model_id, model_type, base_model, model_extension`,
    values: [ownerId, toStored(modelId)],
  });
  return fromStored(rows[0] ?? null);
}
