import { randomUUID } from 'node:crypto';
import { compileRequestValidator, type Endpoint } from '@imagegen/contract';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../db/pool.ts';
import { newModelId, registerLoadedModel, registerTrainedModel } from '../../records/model-registration.ts';
import { deleteModelOfTask } from '../../records/sql/deleteModelOfTask.ts';
import { getModel } from '../../records/sql/getModel.ts';
import { insertModelSync } from '../../records/sql/insertModelSync.ts';
import type { ModelRow } from '../../records/sql/model-row.ts';
import { setModelTask } from '../../records/sql/setModelTask.ts';
import { RoutingError, submitTask, type TaskStatusReader, taskStatusBody } from '../../tasks/index.ts';
import { callerOf } from '../api-key-auth.ts';
import { HttpError, TASK_NOT_FOUND } from '../http-errors.ts';
import { fastifyPath } from './fastify-path.ts';

export interface TaskRouteOptions {
  pool: Pool;
  publicUrl: string;
  statusReader: TaskStatusReader;
}

/**
 * A task-creating endpoint (generation, load_model, training): POST validates with the
 * contract's validator and queues the task; GET <status path> answers the task's status shape.
 */
export function registerTaskEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  options: TaskRouteOptions,
): void {
  const validate = compileRequestValidator(endpoint);
  const kind = endpoint.kind as 'generation' | 'load_model' | 'training';
  const { pool, publicUrl } = options;

  app.post(endpoint.path, async (request, reply) => {
    const caller = callerOf(request);
    const checked = validate(request.body);
    if (!checked.ok) return reply.code(422).send({ detail: checked.detail });
    const input = checked.value;
    const ownerId = caller.ownerId;

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
      if (typeof input.server_id !== 'string' || input.server_id === '') {
        // Syncing needs a destination; the shared schema leaves server_id optional elsewhere.
        const detail = [{ loc: ['body', 'server_id'], msg: 'field required', type: 'value_error.missing' }];
        return reply.code(422).send({ detail });
      }
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
  app.get(fastifyPath(status.path), async (request) => {
    const caller = callerOf(request);
    const taskId = (request.params as Record<string, string>)[param] ?? '';
    const task = await options.statusReader.read(caller.ownerId, taskId);
    // A task polled on another endpoint's status path is not found there either.
    if (!task || task.endpoint !== endpoint.path) throw new HttpError(404, TASK_NOT_FOUND);
    return taskStatusBody(task, publicUrl);
  });
}
