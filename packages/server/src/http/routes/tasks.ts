import { compileRequestValidator, type Endpoint } from '@imagegen/contract';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../db/pool.ts';
import {
  SubmitRefusedError,
  submitModelTask,
  submitTask,
  type TaskStatusReader,
  taskStatusBody,
} from '../../tasks/index.ts';
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
 * contract's validator and queues the task (model tasks with their model row); GET <status path>
 * answers the task's status shape.
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

    // load_model, train_model and sync_model write their model rows with the task (tasks/models).
    const submit = kind === 'generation' ? submitTask : submitModelTask;
    const submitted = await submit(pool, { ownerId, endpoint: endpoint.path, kind, input, publicUrl }).catch(
      (error) => {
        throw error instanceof SubmitRefusedError ? new HttpError(error.status, error.message) : error;
      },
    );

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
