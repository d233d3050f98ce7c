import type { Pool } from '@imagegen/db';
import type { JobModel } from '@imagegen/engines';
import { SubmitRefusedError } from '../refusal.ts';
import { deleteModel } from './sql/deleteModel.ts';
import { findTaskNamingModel } from './sql/findTaskNamingModel.ts';
import { ModelNotFoundError } from './submit-model-task.ts';

/** Removes a deleted model's stored file (COMFYUI_MODELS_DIR as this process sees it). */
export type ModelFileRemover = (model: JobModel) => Promise<void>;

/** The model is loading, or a task that has not ended names it: deleting it would break that task. */
export class ModelInUseError extends SubmitRefusedError {
  override readonly name = 'ModelInUseError';
  constructor(modelId: string, task: { id: string; endpoint: string }) {
    super(
      409,
      `model '${modelId}' is in use by task ${task.id} (${task.endpoint}), which has not ended; ` +
        'cancel it or wait for it to end, then delete the model',
    );
  }
}

/**
 * Deletes one of the owner's models: refused while a task of the owner's that has not ended loads
 * or names it (409: the owner decides, by cancelling or waiting, rather than that task failing
 * for a file gone under it); another owner's model reads as missing (404). The row goes first, so
 * no new task can resolve the model; then its file in every model folder.
 */
export async function deleteOwnerModel(
  pool: Pool,
  ownerId: string,
  modelId: string,
  removeFiles?: ModelFileRemover,
): Promise<{ model_id: string; deleted: true }> {
  const user = await findTaskNamingModel(pool, ownerId, modelId);
  if (user) throw new ModelInUseError(modelId, user);
  const row = await deleteModel(pool, ownerId, modelId);
  if (!row) throw new ModelNotFoundError();
  await removeFiles?.({
    modelId: row.model_id,
    modelType: row.model_type,
    baseModel: row.base_model,
    extension: row.model_extension,
    url: null,
  });
  return { model_id: row.model_id, deleted: true };
}
