import { inTransaction, type Pool, type PoolClient } from '@imagegen/db';
import { SubmitRefusedError } from '../refusal.ts';
import { queueTaskIn } from '../submit.ts';
import { announceTasks } from '../task-notifications.ts';
import type { SubmitTaskParams, SubmittedTask } from '../types.ts';
import { loadedModel, trainedModel } from './new-model.ts';
import { getModel } from './sql/getModel.ts';
import { insertModel } from './sql/insertModel.ts';
import { insertModelSync } from './sql/insertModelSync.ts';

/** sync_model names a model that is not the caller's (or does not exist). */
export class ModelNotFoundError extends SubmitRefusedError {
  override readonly name = 'ModelNotFoundError';
  constructor() {
    super(404, 'Model not found');
  }
}

/**
 * What each model task writes on the models tables, in its task's transaction. A refusal (routing,
 * a missing model) is thrown before anything is written.
 */
const modelRows: Record<string, (client: PoolClient, params: SubmitTaskParams) => Promise<SubmittedTask>> = {
  // The model row is registered under the task's id, so the worker that completes the task finds
  // it; it stays 'loading' until then.
  '/load_model/v1': async (client, params) => {
    const task = await queueTaskIn(client, params);
    await insertModel(client, loadedModel(params.ownerId, task.id, params.input));
    return task;
  },
  '/train_model/v1': async (client, params) => {
    const task = await queueTaskIn(client, params);
    await insertModel(client, trainedModel(params.ownerId, task.id, params.input));
    return task;
  },
  // The owner's model is copied to `server_id`, or to the shared servers without one (the task
  // then runs in the shared pool). The destination is recorded; a later sync refreshes it.
  '/sync_model/v1': async (client, params) => {
    const model = await getModel(client, params.ownerId, String(params.input.model_id));
    if (!model) throw new ModelNotFoundError();
    const task = await queueTaskIn(client, params);
    const serverId = params.input.server_id;
    await insertModelSync(client, {
      modelRowId: model.id,
      ownerId: params.ownerId,
      serverId: typeof serverId === 'string' && serverId !== '' ? serverId : null,
    });
    return task;
  },
};

/**
 * Queues a load_model, train_model or sync_model task together with its models row, in one
 * transaction: a task is never queued without its model, nor a model registered for a task that
 * was refused. Throws SubmitRefusedError (RoutingError, ModelNotFoundError) for refusals.
 */
export async function submitModelTask(pool: Pool, params: SubmitTaskParams): Promise<SubmittedTask> {
  const write = modelRows[params.endpoint];
  if (!write) throw new Error(`${params.endpoint} is not a model task`);
  const submitted = await inTransaction(pool, (client) => write(client, params));
  announceTasks(pool);
  return submitted;
}

/**
 * Queues a task of any kind inside the caller's transaction: a model task with its models row
 * (as submitModelTask), any other alone. The caller wakes the workers after the commit.
 */
export function queueTaskAndRowsIn(client: PoolClient, params: SubmitTaskParams): Promise<SubmittedTask> {
  const write = modelRows[params.endpoint];
  return write ? write(client, params) : queueTaskIn(client, params);
}
