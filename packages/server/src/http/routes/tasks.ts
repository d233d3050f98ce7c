import type { Endpoint } from '@imagegen/contract';
import type { Pool } from '@imagegen/db';
import type { EngineRegistry } from '@imagegen/engines';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_INPUT_LIMITS } from '../../fetch/input-budget.ts';
import type { Metrics } from '../../observability/metrics.ts';
import {
  hasEnded,
  IdempotencyKeyReusedError,
  type QueueEstimates,
  SubmitRefusedError,
  type SubmitTaskParams,
  type SubmittedTask,
  submitIdempotent,
  submitModelTask,
  submitTask,
  type TaskStatus,
  type TaskStatusReader,
  type TaskWatcher,
  taskStatusBody,
  tooManyImages,
} from '../../tasks/index.ts';
import { callerOf } from '../api-key-auth.ts';
import { routeSchema } from '../contract-validation.ts';
import { HttpError, TASK_NOT_FOUND } from '../http-errors.ts';
import { cancelAfter, headerError, idempotencyKey, preferredWait } from '../task-headers.ts';
import { fastifyPath } from './fastify-path.ts';

export interface TaskRouteOptions {
  pool: Pool;
  publicUrl: string;
  statusReader: TaskStatusReader;
  estimates: QueueEstimates;
  watcher: TaskWatcher;
  /** Aborted when the API closes: waiting submissions answer at once. */
  closing: AbortSignal;
  metrics: Metrics;
  /**
   * What the serving engine refuses of a generation before it is queued (a model of a family the
   * pipeline's adapters do not fit): answered 422 at the field, nothing queued. Absent: nothing.
   */
  admit?: EngineRegistry['admit'];
  /** TASK_MAX_INPUT_IMAGES: a request naming more image links is answered 422 (default 64). */
  maxInputImages?: number;
}

/**
 * A task-creating endpoint (generation, load_model, training): POST queues the task with the body
 * the contract validated (defaults filled in; model tasks with their model row), once per
 * Idempotency-Key, with its Cancel-After deadline, and with `Prefer: wait=N` holds the answer until the task ends (at most N
 * seconds); GET <status path> answers the status shape of any of the owner's tasks (whichever path
 * it was submitted to), a pending one with its estimates.
 */
export function registerTaskEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  options: TaskRouteOptions,
): void {
  const kind = endpoint.kind as 'generation' | 'load_model' | 'training';
  const { publicUrl } = options;

  app.post(endpoint.path, { schema: routeSchema(endpoint) }, async (request, reply) => {
    const input = request.body as Record<string, unknown>;
    const ownerId = callerOf(request).ownerId;
    const wait = preferredWait(request);
    const key = idempotencyKey(request);
    const deadline = cancelAfter(request);
    // Before the Idempotency-Key is claimed: a refused request leaves it free, as routing does.
    // A load's sample_images are links shown with the model, never fetched: not counted.
    const refusal =
      (kind === 'load_model'
        ? null
        : tooManyImages(
            endpoint.imageFields,
            input,
            options.maxInputImages ?? DEFAULT_INPUT_LIMITS.maxImages,
          )) ?? (kind === 'generation' ? options.admit?.(endpoint.path, input) : null);
    if (refusal) {
      throw new HttpError(422, [{ loc: ['body', refusal.field], msg: refusal.message, type: refusal.type }]);
    }

    // The request id travels with the task, so the worker's and the webhook's log lines carry it.
    const params = {
      ownerId,
      endpoint: endpoint.path,
      kind,
      input,
      publicUrl,
      requestId: request.id,
      ...(deadline ? { cancelAfter: deadline } : {}),
    };
    const { submitted, replayed } = await queueTask(options, request, params, key);
    if (replayed) reply.header('idempotent-replayed', 'true');

    if (wait > 0) {
      reply.header('preference-applied', `wait=${wait}`);
      const ended = await waitForEnd(options, reply, ownerId, submitted.id, wait);
      if (ended) return { ...taskStatusBody(ended, publicUrl), id: submitted.id };
    }
    if (kind === 'training') return { id: submitted.id, status: 'queued' };
    return submitted.outputUrls
      ? { status: 'PENDING', id: submitted.id, download_urls: submitted.outputUrls }
      : { status: 'PENDING', id: submitted.id };
  });

  const status = endpoint.status;
  if (!status) return;
  const param = /\{([^}]+)\}/.exec(status.path)?.[1] ?? 'task_id';
  const readStatus = async (request: FastifyRequest) => {
    const caller = callerOf(request);
    const taskId = (request.params as Record<string, string>)[param] ?? '';
    const task = await options.statusReader.read(caller.ownerId, taskId);
    // Any of the owner's tasks answers at any task path's status, in its own shape, as the
    // original's status read looked a task up by its id alone: its frontend polls upscaler and
    // model-switch tasks at /bgchanger/v1/status. Another owner's id stays not found.
    if (!task) throw new HttpError(404, TASK_NOT_FOUND);
    return statusAnswer(options, task);
  };
  // Its aliases (the forms the original service's docs print) answer exactly as it does.
  for (const path of [status.path, ...(status.aliases ?? []).map((alias) => alias.path)]) {
    app.get(fastifyPath(path), { schema: routeSchema(status) }, readStatus);
  }
}

/**
 * Queues a task, once per Idempotency-Key (`key`), and counts and logs a new one: the one way in
 * of the submission paths, the OpenAI Images API and the MCP tools. A refusal throws the HttpError
 * the submission path answers (the other ways put it in their own words).
 */
export async function queueTask(
  options: Pick<TaskRouteOptions, 'pool' | 'metrics'>,
  request: FastifyRequest,
  params: SubmitTaskParams,
  key: string | undefined,
): Promise<{ submitted: SubmittedTask; replayed: boolean }> {
  let queued: { submitted: SubmittedTask; replayed: boolean };
  try {
    // load_model, train_model and sync_model write their model rows with the task (tasks/models).
    const submit = params.kind === 'generation' ? submitTask : submitModelTask;
    queued =
      key === undefined
        ? { submitted: await submit(options.pool, params), replayed: false }
        : await submitIdempotent(options.pool, params, key);
  } catch (error) {
    if (error instanceof SubmitRefusedError) throw new HttpError(error.status, error.message);
    if (error instanceof IdempotencyKeyReusedError) {
      throw headerError('Idempotency-Key', error.message, 'value_error.idempotency_key.reused');
    }
    throw error;
  }
  if (!queued.replayed) {
    options.metrics.tasksSubmitted.inc({ pipeline: params.endpoint });
    request.log.info({ taskId: queued.submitted.id, pipeline: params.endpoint }, 'task submitted');
  }
  return queued;
}

/**
 * What the status path answers for the task: its status body, a pending one with its estimates
 * (at once: status polls are the API's most frequent request, and a promise costs them).
 */
export function statusAnswer(
  options: Pick<TaskRouteOptions, 'estimates' | 'publicUrl'>,
  task: TaskStatus,
): Record<string, unknown> | Promise<Record<string, unknown>> {
  if (hasEnded(task)) return taskStatusBody(task, options.publicUrl);
  const estimates = options.estimates.of(task);
  return estimates instanceof Promise
    ? estimates.then((known) => taskStatusBody(task, options.publicUrl, known))
    : taskStatusBody(task, options.publicUrl, estimates);
}

/**
 * The task's final status if it ends within `seconds`; null if not, or when the client goes away
 * or the API closes first.
 */
async function waitForEnd(
  options: TaskRouteOptions,
  reply: FastifyReply,
  ownerId: string,
  id: string,
  seconds: number,
): Promise<TaskStatus | null> {
  const gone = new AbortController();
  const onClose = () => gone.abort();
  reply.raw.once('close', onClose);
  try {
    return await options.watcher.waitForEnd(
      ownerId,
      id,
      seconds * 1000,
      AbortSignal.any([gone.signal, options.closing]),
    );
  } finally {
    reply.raw.off('close', onClose);
  }
}
