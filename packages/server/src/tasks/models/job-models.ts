import type { Queryable } from '@imagegen/db';
import { type EngineJob, USER_MODEL_ID } from '@imagegen/engines';
import type { TaskRecord } from '../types.ts';
import { listJobModels } from './sql/listJobModels.ts';

/** The request fields that may name the owner's models by model id. */
const MODEL_FIELDS = ['model_id', 'lora_models', 'embeddings', 'ip_adapter'] as const;

/** The model tasks whose engine gets the row their submission registered: the model it makes. */
const REGISTERING = new Set(['/load_model/v1', '/train_model/v1']);

/**
 * The owner's models a task hands its engine (`EngineJob.models`), read in one statement: the
 * ready models its model fields name by id, and for a load_model or a training the row it
 * registered. Only the task owner's rows are read, so another owner's model id resolves to nothing
 * and the engine refuses it. Absent when the task names none.
 */
export async function jobModels(db: Queryable, task: TaskRecord): Promise<EngineJob['models']> {
  const ids = new Set<string>();
  for (const field of MODEL_FIELDS) {
    for (const value of [task.input[field]].flat()) {
      if (typeof value === 'string' && USER_MODEL_ID.test(value)) ids.add(value);
    }
  }
  const taskId = REGISTERING.has(task.endpoint) ? task.id : null;
  if (ids.size === 0 && taskId === null) return undefined;
  const rows = await listJobModels(db, { ownerId: task.ownerId, modelIds: [...ids], taskId });
  return Object.fromEntries(
    rows.map((row) => [
      row.model_id,
      {
        modelId: row.model_id,
        modelType: row.model_type,
        baseModel: row.base_model,
        extension: row.model_extension,
        url: row.model_url,
      },
    ]),
  );
}
