import { CANCELLED_ERROR } from '@imagegen/contract';
import type { PreviewImage } from '@imagegen/engines';
import { attemptPreviews } from './previews/attempt-previews.ts';
import { heartbeatTask } from './sql/heartbeatTask.ts';
import type { TaskRecord } from './types.ts';
import { attemptWebhookEvents } from './webhook-events.ts';
import type { WorkerContext } from './worker-context.ts';

/**
 * Why a running attempt was aborted: the worker no longer owns it, is shutting down, or the
 * task's caller cancelled it (the engine sees this reason on its signal).
 */
export const LEASE_LOST = 'lease lost';
export const SHUTDOWN = 'worker shutting down';
export const CANCELLED = CANCELLED_ERROR;
/**
 * The error of a task whose deadline passed, as SQL's `format` template: `%s` is its Cancel-After
 * as the caller wrote it. A queued task gets it from `expireDeadlines`, a running one from here.
 */
export const DEADLINE_ERROR = "the task's deadline (Cancel-After: %s) passed";

/** The abort reason of an attempt stopped at its task's deadline: the task fails, never retried. */
export class DeadlinePassedError extends Error {
  constructor(cancelAfter: string) {
    super(DEADLINE_ERROR.replace('%s', cancelAfter));
  }
}

export interface AttemptLease {
  /** Records the engine's progress; written with the next heartbeat or flush. */
  progress(fraction: number, message?: string): void;
  /** Keeps the engine's newest preview for the task's status streams (previews/attempt-previews.ts). */
  preview(image: PreviewImage): void;
  /**
   * The attempt has run: stop renewing. Its settling write checks the lease itself; it waits for
   * the promise, so the task's start and progress webhooks are queued before its final one, and
   * its preview is gone before its final status.
   */
  stop(): Promise<void>;
}

/**
 * Holds the lease of a running attempt: renews it every third of its length (with the progress),
 * writes new progress at most every `progressFlushMs`, and aborts `controller` when the lease was lost to
 * another worker, the attempt outran its time limit (its pipeline's, else `attemptTimeoutMs`), or
 * the task's deadline passed, whichever comes first. The task's `start` and `progress` webhooks,
 * when it asked for them, go out from here too (webhook-events.ts), and its engine's previews.
 */
export function holdLease(
  ctx: WorkerContext,
  task: TaskRecord,
  leaseOwner: string,
  controller: AbortController,
): AttemptLease {
  const events = attemptWebhookEvents(ctx, task);
  const previews = attemptPreviews(ctx, task, leaseOwner);
  let progress: number | null = null;
  let message: string | null = null;
  let dirty = false;
  const beat = async () => {
    dirty = false;
    const held = await heartbeatTask(ctx.pool, {
      id: task.id,
      leaseOwner,
      leaseMs: ctx.leaseMs,
      progress,
      message,
    }).catch(() => true); // a failed heartbeat is retried; the lease decides, not one query
    if (!held) controller.abort(new Error(LEASE_LOST));
  };
  const heartbeat = setInterval(() => void beat(), Math.max(100, ctx.leaseMs / 3));
  const progressFlush = setInterval(() => dirty && void beat(), ctx.progressFlushMs);
  const limitMs = ctx.attemptTimeoutsByPipeline?.[task.endpoint] ?? ctx.attemptTimeoutMs;
  // The deadline was set by the database's clock; the workers' clocks are assumed to agree with it.
  const leftMs = task.deadlineAt ? task.deadlineAt.getTime() - Date.now() : Number.POSITIVE_INFINITY;
  const deadline =
    leftMs < limitMs
      ? setTimeout(
          () => controller.abort(new DeadlinePassedError(task.cancelAfter ?? '')),
          Math.max(0, leftMs),
        )
      : setTimeout(
          () => controller.abort(new Error(`the attempt took longer than ${limitMs / 1000} s`)),
          limitMs,
        );
  return {
    progress(fraction, text) {
      progress = Math.min(1, Math.max(0, fraction));
      message = text ?? null;
      dirty = true;
      events?.progress(progress);
    },
    preview: (image) => previews.preview(image),
    async stop() {
      clearInterval(heartbeat);
      clearInterval(progressFlush);
      clearTimeout(deadline);
      await Promise.all([events?.stop(), previews.stop()]);
    },
  };
}
