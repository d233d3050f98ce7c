import type { Endpoint } from '@imagegen/contract';
import type { Pool } from '@imagegen/db';
import type { FastifyInstance } from 'fastify';
import {
  SubmitRefusedError,
  submitModelTask,
  submitTask,
  type TaskStatusReader,
  taskStatusBody,
} from '../../tasks/index.ts';
import { callerOf } from '../api-key-auth.ts';
import { routeSchema } from '../contract-validation.ts';
import { HttpError, TASK_NOT_FOUND } from '../http-errors.ts';
import { fastifyPath } from './fastify-path.ts';

export interface TaskRouteOptions {
  pool: Pool;
  publicUrl: string;
  statusReader: TaskStatusReader;
}

/**
 * A task-creating endpoint (generation, load_model, training): POST queues the task with the body
 * the contract validated (defaults filled in; model tasks with their model row); GET <status path>
 * answers the task's status shape.
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
  app.get(fastifyPath(status.path), { schema: routeSchema(status) }, async (request) => {
    const caller = callerOf(request);
    const taskId = (request.params as Record<string, string>)[param] ?? '';
    const task = await options.statusReader.read(caller.ownerId, taskId);
    // A task polled on another endpoint's status path is not found there either.
    if (!task || task.endpoint !== endpoint.path) throw new HttpError(404, TASK_NOT_FOUND);
    return taskStatusBody(task, publicUrl);
  });
}
