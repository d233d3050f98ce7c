import { type Queryable, toStored } from '@imagegen/db';

/**
 * A task of the owner's that has not ended and names the model by id (`model_id`, `lora_models`,
 * `embeddings`), or that loads it: the model is in use, and is not deleted under it.
 */
export async function findTaskNamingModel(
  db: Queryable,
  ownerId: string,
  modelId: string,
): Promise<{ id: string; endpoint: string } | null> {
  const { rows } = await db.query<{ id: string; endpoint: string }>({
    name: 'findTaskNamingModel',
    text: `SELECT t.id, t.endpoint FROM tasks t
            WHERE t.owner_id = $1 AND t.state IN ('queued', 'running')
              AND (t.input->>'model_id' = $2 OR t.input->'lora_models' ? $2 OR t.input->'embeddings' ? $2
                   OR t.id = (SELECT task_id FROM models WHERE owner_id = $1 AND model_id = $2))
            ORDER BY t.created_at LIMIT 1`,
    values: [ownerId, toStored(modelId)],
  });
  return rows[0] ?? null;
}
