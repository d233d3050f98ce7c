import { fromStored, type Queryable, toStored } from '@imagegen/db';

export interface JobModelRow {
  model_id: string;
  model_type: string;
  base_model: string;
  model_extension: string | null;
  model_url: string | null;
}

/**
 * The owner's models a task hands its engine, in one statement: the ready ones among `modelIds`
 * (another owner's id matches nothing), and the row a load_model or train_model task registered
 * (`taskId`).
 */
export async function listJobModels(
  db: Queryable,
  params: { ownerId: string; modelIds: readonly string[]; taskId: string | null },
): Promise<JobModelRow[]> {
  const { rows } = await db.query<JobModelRow>({
    name: 'listJobModels',
    text: `SELECT model_id, model_type, base_model, model_extension, model_url FROM models
            WHERE owner_id = $1 AND ((model_id = ANY($2::text[]) AND status = 'ready') OR task_id = $3)`,
    values: [params.ownerId, toStored([...params.modelIds]), toStored(params.taskId)],
  });
  return fromStored(rows);
}
