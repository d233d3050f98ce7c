import { randomUUID } from 'node:crypto';
import type { Endpoint } from '@imagegen/contract';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../db/pool.ts';
import { newModelId, registerLoadedModel, registerTrainedModel } from '../../records/model-registration.ts';
import { deleteModelOfTask } from '../../records/sql/deleteModelOfTask.ts';
import { getModel } from '../../records/sql/getModel.ts';
import { insertModelSync } from '../../records/sql/insertModelSync.ts';
import type { ModelRow } from '../../records/sql/model-row.ts';
import { setModelTask } from '../../records/sql/setModelTask.ts';
import { RoutingError, submitTask, taskStatusBody } from '../../tasks/index.ts';
import { callerOf } from '../api-key-auth.ts';
import { routeSchema } from '../contract-validation.ts';
import { HttpError, TASK_NOT_FOUND } from '../http-errors.ts';
import type { TaskStatusReader } from '../task-status-reader.ts';
import { fastifyPath } from './fastify-path.ts';

export interface TaskRouteOptions {
  pool: Pool;
  publicUrl: string;
  statusReader: TaskStatusReader;
}

/**
 * A task-creating endpoint (generation, load_model, training): POST queues the task with the body
 * the contract validated (defaults filled in); GET <status path> answers the task's status shape.
 */
export function registerTaskEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  options: TaskRouteOptions,
): void {
  const kind = endpoint.kind as 'generation' | 'load_model' | 'training';
  const { pool, publicUrl } = options;

  app.post(endpoint.path, { schema: routeSchema(endpoint) }, async (request) => {
    const input = request.body as Record<string, unknown>;
    const ownerId = callerOf(request).ownerId;

    // load_model and train_model register their model first, under the task's id, so the worker
    // that completes the task always finds it (even when it finishes before we answer).
    const id = randomUUID();
    let model: ModelRow | null = null;
    let synced: ModelRow | null = null;
    if (endpoint.path === '/load_model/v1') {
      model = await registerLoadedModel(pool, ownerId, id, newModelId(), input);
    } else if (kind === 'training') {
      model = await registerTrainedModel(pool, ownerId, id, newModelId(), input);
    } else if (endpoint.path === '/sync_model/v1') {
      synced = await getModel(pool, ownerId, String(input.model_id));
      if (!synced) throw new HttpError(404, 'Model not found');
    }

    let submitted: Awaited<ReturnType<typeof submitTask>>;
    try {
      submitted = await submitTask(pool, { ownerId, endpoint: endpoint.path, kind, input, publicUrl, id });
    } catch (error) {
      if (model) await deleteModelOfTask(pool, ownerId, id);
      if (error instanceof RoutingError) throw new HttpError(error.status, error.message);
      throw error;
    }
    if (model && submitted.id !== id) await setModelTask(pool, model.id, submitted.id);
    if (synced && typeof input.server_id === 'string') {
      await insertModelSync(pool, { modelRowId: synced.id, ownerId, serverId: input.server_id });
    }

    if (kind === 'training') return { id: submitted.id, status: 'queued' };
    return submitted.outputUrls
      ? { status: 'PENDING', id: submitted.id, download_urls: submitted.outputUrls }
      : { status: 'PENDING', id: submitted.id };
  });

  const status = endpoint.status;
  if (!status) return;
  const param = /\{([^}]+)\}/.exec(status.path)?.[1] ?? 'task_id';
  app.get(fastifyPath(status.path), { schema: routeSchema(status) }, async (request) => {
    const caller = callerOf(request);
    const taskId = (request.params as Record<string, string>)[param] ?? '';
    const task = await options.statusReader.read(caller.ownerId, taskId);
    // A task polled on another endpoint's status path is not found there either.
    if (!task || task.endpoint !== endpoint.path) throw new HttpError(404, TASK_NOT_FOUND);
    return taskStatusBody(task, publicUrl);
  });
}
