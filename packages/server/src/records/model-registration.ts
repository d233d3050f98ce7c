import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/pool.ts';
import { insertModel } from './sql/insertModel.ts';
import type { ModelRow } from './sql/model-row.ts';

/** Public model ids are lower-case hex, so requests can name them where the contract takes `{hash}`. */
export function newModelId(): string {
  return randomBytes(16).toString('hex');
}

/** The UserModel a load_model request registers (status 'loading' until its task completes). */
export function registerLoadedModel(
  db: Queryable,
  ownerId: string,
  taskId: string,
  modelId: string,
  input: Readonly<Record<string, unknown>>,
): Promise<ModelRow> {
  return insertModel(db, {
    ownerId,
    modelId,
    modelName: String(input.model_name),
    modelUrl: (input.model_url as string | null | undefined) ?? null,
    pretrainedModelPath: (input.pretrained_model_path as string | null | undefined) ?? null,
    baseModel: String(input.base_model),
    modelType: String(input.model_type),
    modelExtension: (input.model_extension as string | undefined) ?? null,
    revision: (input.revision as string | undefined) ?? null,
    description: String(input.description ?? ''),
    tags: String(input.tags ?? ''),
    sampleImages: (input.sample_images as string[] | undefined) ?? [],
    triggerWords: (input.trigger_words as string | undefined) ?? null,
    trainedModel: false,
    nsfw: input.nsfw === true,
    visibility: String(input.visibility ?? 'private'),
    taskId,
  });
}

/** The UserModel a train_model request will produce: a LoRA on the chosen base model. */
export function registerTrainedModel(
  db: Queryable,
  ownerId: string,
  taskId: string,
  modelId: string,
  input: Readonly<Record<string, unknown>>,
): Promise<ModelRow> {
  return insertModel(db, {
    ownerId,
    modelId,
    modelName: String(input.model_name),
    modelUrl: null,
    pretrainedModelPath: null,
    baseModel: String(input.base_model),
    modelType: 'lora',
    modelExtension: 'safetensors',
    revision: null,
    description: String(input.description ?? ''),
    tags: String(input.tags ?? ''),
    sampleImages: [],
    triggerWords: (input.trigger_words as string | undefined) ?? null,
    trainedModel: true,
    nsfw: input.nsfw === true,
    visibility: String(input.visibility ?? 'private'),
    taskId,
  });
}
