import { fromStored, type Queryable, toStored } from '@imagegen/db';
import { MODEL_COLUMNS, type ModelRow } from './model-row.ts';

export interface NewModel {
  ownerId: string;
  modelId: string;
  modelName: string;
  modelUrl: string | null;
  pretrainedModelPath: string | null;
  baseModel: string;
  modelType: string;
  modelExtension: string | null;
  revision: string | null;
  description: string;
  tags: string;
  sampleImages: readonly string[];
  triggerWords: string | null;
  trainedModel: boolean;
  nsfw: boolean;
  visibility: string;
  taskId: string | null;
}

export async function insertModel(db: Queryable, model: NewModel): Promise<ModelRow> {
  const m = toStored(model);
  const { rows } = await db.query<ModelRow>({
    name: 'insertModel',
    text: `INSERT INTO models (owner_id, model_id, model_name, model_url, pretrained_model_path, base_model,
             model_type, model_extension, revision, description, tags, sample_images, trigger_words,
             trained_model, nsfw, visibility, task_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
           RETURNING ${MODEL_COLUMNS}`,
    values: [
      m.ownerId,
      m.modelId,
      m.modelName,
      m.modelUrl,
      m.pretrainedModelPath,
      m.baseModel,
      m.modelType,
      m.modelExtension,
      m.revision,
      m.description,
      m.tags,
      JSON.stringify(m.sampleImages),
      m.triggerWords,
      m.trainedModel,
      m.nsfw,
      m.visibility,
      m.taskId,
    ],
  });
  return fromStored(rows[0]!);
}
