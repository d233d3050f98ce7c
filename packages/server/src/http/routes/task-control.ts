import type { Endpoint } from '@imagegen/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  cancelTask,
  type EnqueueWebhook,
  followPreviews,
  hasEnded,
  type TaskPreview,
  type TaskStatus,
  taskStatusBody,
} from '../../tasks/index.ts';
import type { BlobStore } from '../../tasks/types.ts';
import { callerOf } from '../api-key-auth.ts';
import { routeSchema } from '../contract-validation.ts';
import { HttpError, TASK_NOT_FOUND } from '../http-errors.ts';
import { fastifyPath } from './fastify-path.ts';
import { statusAnswer, type TaskRouteOptions } from './tasks.ts';

export interface TaskControlOptions extends TaskRouteOptions {
  store: BlobStore;
  enqueueWebhook?: EnqueueWebhook;
  /** How often an idle status stream sends a keep-alive comment (default 15 s). */
  keepAliveMs?: number;
  /** Open status streams: the API ends them when it closes. */
  streams: Set<() => void>;
}

const KEEP_ALIVE_MS = 15_000;
/** How long a browser's EventSource waits before it reconnects, in ms (the stream's `retry`). */
const RECONNECT_MS = 2_000;
/**
 * How often a stream looks again at a waiting task's place in line. The task does
 * not change while it waits, but the tasks ahead of it do: without a second look the first
 * event's `queue_position` would stand until the task starts. The look reads the process's queue
 * snapshot in memory (retaken at most every 2 s for every stream together), never the database.
 */
const REESTIMATE_MS = 2_000;

function taskIdOf(request: FastifyRequest, endpoint: Endpoint): string {
  const name = /\{([^}]+)\}/.exec(endpoint.path)?.[1] ?? 'task_id';
  return (request.params as Record<string, string>)[name] ?? '';
}

/**
 * POST <path>/cancel/{task_id}: ends a queued or running task of the owner's and answers its final
 * status (FAILURE, cancelled by the caller); a task that already ended answers 409 and stays as it
 * was; an unknown id, or another owner's, 404. Like the status path, any task path's cancel acts on
 * any of the owner's tasks: the id names the task.
 */
export function registerCancelEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  options: TaskControlOptions,
): void {
  app.post(fastifyPath(endpoint.path), { schema: routeSchema(endpoint) }, async (request) => {
    const id = taskIdOf(request, endpoint);
    const result = await cancelTask(options.pool, {
      ownerId: callerOf(request).ownerId,
      id,
      store: options.store,
      publicUrl: options.publicUrl,
      ...(options.enqueueWebhook ? { enqueueWebhook: options.enqueueWebhook } : {}),
    });
    if (result.outcome === 'missing') throw new HttpError(404, TASK_NOT_FOUND);
    const body = taskStatusBody(result.task, options.publicUrl);
    if (result.outcome === 'ended') {
      const why = typeof body.error === 'string' ? ` (${body.error})` : '';
      throw new HttpError(
        409,
        `Task ${result.task.id} has already ended with status ${body.status}${why}; only a queued or ` +
          'running task can be cancelled',
      );
    }
    return body;
  });
}

/**
 * GET <status path>/events: the task's status as Server-Sent Events. The current status at once
 * (unless Last-Event-ID says the client has it), a new event at each change of state or progress
 * and, while the task waits, whenever its place in line or eta moves (such an event repeats the id
 * of the change it estimates), the final status last, then the stream ends. Event ids are the
 * task's change counter, so a client that reconnects with Last-Event-ID gets only what is newer,
 * and 204 once it has the final event (which stops a browser's EventSource from reconnecting).
 */
export function registerEventsEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  options: TaskControlOptions,
): void {
  const keepAliveMs = options.keepAliveMs ?? KEEP_ALIVE_MS;
  app.get(
    fastifyPath(endpoint.path),
    // A HEAD would hold a stream open that can never carry anything.
    { schema: routeSchema(endpoint), exposeHeadRoute: false },
    async (request, reply) => {
      const ownerId = callerOf(request).ownerId;
      const lastSeen = lastEventId(request);
      let stream: EventStream | null = null;
      let pending: TaskStatus[] = [];
      const watching = await options.watcher.watch(ownerId, taskIdOf(request, endpoint), (task) => {
        if (stream) void stream.send(task);
        else pending.push(task);
      });
      // As the status path: any of the owner's tasks, whichever path it was submitted to.
      if (!watching) throw new HttpError(404, TASK_NOT_FOUND);
      const first = watching.task;
      if (hasEnded(first) && lastSeen !== undefined && lastSeen >= first.version) {
        watching.stop();
        return reply.code(204).send();
      }
      stream = new EventStream(reply, options, keepAliveMs, watching.stop);
      if (lastSeen === undefined || first.version > lastSeen) await stream.send(first);
      else stream.skipUpTo(lastSeen, first);
      for (const task of pending) await stream.send(task);
      pending = [];
      if ((request.query as { previews?: boolean }).previews === true) await stream.showPreviews(first.id);
      return reply;
    },
  );
}

/** The Last-Event-ID a reconnecting client sent (a change counter), if any. */
function lastEventId(request: FastifyRequest): number | undefined {
  const header = request.headers['last-event-id'];
  const text = Array.isArray(header) ? header[0] : header;
  return text !== undefined && /^\d{1,9}$/.test(text.trim()) ? Number(text.trim()) : undefined;
}

/** One open status stream: writes events in version order and ends after the final one. */
class EventStream {
  private sent = -1;
  private ended = false;
  private readonly keepAlive: NodeJS.Timeout;
  /** Set while the last task sent waits in the queue: its estimates are looked at again. */
  private reestimate: NodeJS.Timeout | null = null;
  /** The last task sent, and the data of its last event. */
  private last: { task: TaskStatus; data: string } | null = null;
  /** Stops following the task's previews, when the stream shows them. */
  private stopPreviews: (() => void) | null = null;
  private readonly end: () => void;
  /** Answers are computed one at a time, so events leave in the order their versions rose. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly reply: FastifyReply,
    private readonly options: TaskControlOptions,
    keepAliveMs: number,
    stopWatching: () => void,
  ) {
    reply.hijack();
    reply.raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // Proxies that buffer responses (nginx) would hold the events back.
      'x-accel-buffering': 'no',
    });
    reply.raw.write(`retry: ${RECONNECT_MS}\n\n`);
    this.keepAlive = setInterval(() => reply.raw.write(': keep-alive\n\n'), keepAliveMs);
    this.end = () => {
      if (this.ended) return;
      this.ended = true;
      clearInterval(this.keepAlive);
      this.stopReestimating();
      this.stopPreviews?.();
      stopWatching();
      options.streams.delete(this.end);
      reply.raw.end();
    };
    options.streams.add(this.end);
    reply.raw.once('close', this.end);
  }

  /**
   * The client already has every event up to this id. If that is the current task, waiting, its
   * estimates are still followed: the client's may be old, so the first look sends them.
   */
  skipUpTo(version: number, current: TaskStatus): void {
    this.sent = Math.max(this.sent, version);
    if (current.version === this.sent) {
      this.last = { task: current, data: '' };
      this.followEstimates(current);
    }
  }

  /**
   * Sends the task's previews too, while it runs: the newest at once, then each new one, as
   * `preview` events without an id (a client that reconnects gets the newest again).
   */
  async showPreviews(taskId: string): Promise<void> {
    if (this.ended) return;
    const stop = await followPreviews(this.options.pool, taskId, (preview) => this.writePreview(preview));
    if (this.ended) stop();
    else this.stopPreviews = stop;
  }

  private writePreview(preview: TaskPreview): void {
    if (this.ended) return;
    const data = JSON.stringify({
      content_type: preview.contentType,
      image: preview.image.toString('base64'),
    });
    this.reply.raw.write(`event: preview\ndata: ${data}\n\n`);
  }

  send(task: TaskStatus): Promise<void> {
    this.queue = this.queue
      .then(async () => {
        if (this.ended || task.version <= this.sent) return;
        const body = await statusAnswer(this.options, task);
        if (this.ended) return;
        this.sent = task.version;
        this.write(task, JSON.stringify(body));
        if (hasEnded(task)) this.end();
        else this.followEstimates(task);
      })
      .catch(this.end);
    return this.queue;
  }

  /** The waiting task's status again, sent only when its estimates moved. */
  private sendEstimates(): void {
    this.queue = this.queue
      .then(async () => {
        const last = this.last;
        if (this.ended || !last || last.task.version !== this.sent) return;
        const data = JSON.stringify(await statusAnswer(this.options, last.task));
        if (!this.ended && data !== last.data && this.last === last) this.write(last.task, data);
      })
      .catch(this.end);
  }

  private write(task: TaskStatus, data: string): void {
    this.last = { task, data };
    this.reply.raw.write(`id: ${task.version}\ndata: ${data}\n\n`);
  }

  /** Looks at the estimates again every few seconds while the task waits; not once it runs. */
  private followEstimates(task: TaskStatus): void {
    if (task.state !== 'queued') this.stopReestimating();
    else this.reestimate ??= setInterval(() => this.sendEstimates(), REESTIMATE_MS);
  }

  private stopReestimating(): void {
    if (this.reestimate) clearInterval(this.reestimate);
    this.reestimate = null;
  }
}
