import { taskWebhookBody } from './status-body.ts';
import type { TaskRecord, WebhookEvent } from './types.ts';
import type { WorkerContext } from './worker-context.ts';

/** A task's progress calls its webhook at most once per this many milliseconds. */
export const PROGRESS_EVENT_MS = 500;

/** The webhook a task calls at `event`: the request asked for it, and webhooks are delivered here. */
export function webhookFor(
  ctx: Pick<WorkerContext, 'enqueueWebhook'>,
  task: Pick<TaskRecord, 'input'>,
  event: WebhookEvent,
): string | null {
  const url = task.input.webhook;
  if (typeof url !== 'string' || url === '' || !ctx.enqueueWebhook) return null;
  // Absent, the filter is `["completed"]`: the one call every task made before the filter existed.
  const filter = task.input.webhook_events_filter;
  const chosen = Array.isArray(filter) ? filter.includes(event) : event === 'completed';
  return chosen ? url : null;
}

/** The `start` and `progress` calls of one attempt. */
export interface AttemptWebhookEvents {
  /** The engine reported progress: called with it now, or when PROGRESS_EVENT_MS has passed. */
  progress(fraction: number): void;
  /**
   * The attempt has run: a progress call still waiting is dropped (the final status follows), and
   * the promise resolves once the calls already made are in the outbox, so the `completed` one
   * written after it is the task's last.
   */
  stop(): Promise<void>;
}

/**
 * The `start` call of a claimed task (queued at once) and its throttled `progress` calls, or null
 * when the task asked for neither. Each body is the status the task answers at that moment, with
 * its `id` and `path` as the final call's, and the `event`. They are written in order, one after
 * the other, outside any transaction: they report a moment, and a lost one changes nothing.
 */
export function attemptWebhookEvents(ctx: WorkerContext, task: TaskRecord): AttemptWebhookEvents | null {
  const start = webhookFor(ctx, task, 'start');
  const onProgress = webhookFor(ctx, task, 'progress');
  const enqueue = ctx.enqueueWebhook;
  if ((!start && !onProgress) || !enqueue) return null;
  let written = Promise.resolve();
  const send = (event: WebhookEvent, url: string, progress: number | null) => {
    const body = { ...taskWebhookBody({ ...task, state: 'running', progress }, ctx.publicUrl), event };
    written = written
      .then(() => enqueue(ctx.pool, { ownerId: task.ownerId, taskId: task.id, url, body, event }))
      .catch((error: unknown) =>
        ctx.log(`task ${task.id}: ${event} webhook not queued: ${(error as Error).message}`),
      );
  };
  if (start) send('start', start, null);
  let lastSent = Number.NEGATIVE_INFINITY;
  let latest = 0;
  let timer: NodeJS.Timeout | null = null;
  const sendProgress = () => {
    timer = null;
    lastSent = performance.now();
    if (onProgress) send('progress', onProgress, latest);
  };
  return {
    progress(fraction) {
      if (!onProgress) return;
      latest = Math.min(1, Math.max(0, fraction));
      if (timer) return;
      const wait = lastSent + PROGRESS_EVENT_MS - performance.now();
      if (wait <= 0) sendProgress();
      else timer = setTimeout(sendProgress, wait);
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
      return written;
    },
  };
}
