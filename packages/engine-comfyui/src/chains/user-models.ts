import { EngineInputError, USER_MODEL_ID } from '@imagegen/engines';
import type { CompileContext } from '../contracts.ts';
import { modelFilePath } from '../model-store.ts';

/**
 * The owner's models a request names by model id (`model_id`, `lora_models`, `embeddings`,
 * `ip_adapter`): the
 * worker resolved them from the owner's rows into the context's `models`, so a name of model-id
 * form that is not there is another owner's, still loading, or unknown, and is refused rather
 * than looked up as a file name.
 */

export interface ModelWanted {
  readonly type: 'checkpoint' | 'lora' | 'embedding' | 'adapter';
  /** The base models this graph can take (`sd1.5`, `sdxl`, `flux`); absent: any. */
  readonly base?: string;
}

/**
 * The file of the owner's model `name` names in `field` (`<model_id>.<ext>`), checked against what
 * the graph takes; undefined when `name` is not a model id (a file or id of the server's own).
 */
export function ownerModelFile(
  ctx: Pick<CompileContext, 'models'>,
  field: string,
  name: string,
  wanted: ModelWanted,
): string | undefined {
  const model = ctx.models?.[name];
  if (!model) {
    if (USER_MODEL_ID.test(name)) {
      throw new EngineInputError(`${field}: '${name}' is not one of your loaded models`);
    }
    return undefined;
  }
  if (model.modelType !== wanted.type) {
    const article = /^[aeiou]/.test(wanted.type) ? 'an' : 'a';
    throw new EngineInputError(
      `${field}: model '${name}' is a ${model.modelType}, not ${article} ${wanted.type}`,
    );
  }
  if (wanted.base !== undefined && model.baseModel !== wanted.base) {
    throw new EngineInputError(
      `${field}: model '${name}' is a ${model.baseModel} ${model.modelType}; this pipeline takes ${wanted.base} models`,
    );
  }
  return modelFilePath(model).file;
}
