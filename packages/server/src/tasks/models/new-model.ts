import { randomBytes } from 'node:crypto';
import type { NewModel } from './sql/insertModel.ts';

/** Public model ids are lower-case hex, so requests can name them where the contract takes `{hash}`. */
function newModelId(): string {
  return randomBytes(16).toString('hex');
}

type Input = Readonly<Record<string, unknown>>;

/** The UserModel a load_model request registers (status 'loading' until its task completes). */
export function loadedModel(ownerId: string, taskId: string, input: Input): NewModel {
  return {
    ownerId,
    modelId: newModelId(),
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
  };
}

/** The UserModel a train_model request will produce: a LoRA on the chosen base model. */
export function trainedModel(ownerId: string, taskId: string, input: Input): NewModel {
  return {
    ownerId,
    modelId: newModelId(),
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
  };
}
