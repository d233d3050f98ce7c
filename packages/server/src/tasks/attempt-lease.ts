import { CANCELLED_ERROR } from '@imagegen/contract';
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

export interface AttemptLease {
  /** Records the engine's progress; written with the next heartbeat or flush. */
  progress(fraction: number, message?: string): void;
  /**
   * The attempt has run: stop renewing. Its settling write checks the lease itself; it waits for
   * the promise, so the task's start and progress webhooks are queued before its final one.
   */
  stop(): Promise<void>;
}

/**
 * Holds the lease of a running attempt: renews it every third of its length (with the progress),
 * writes new progress at most every `progressFlushMs`, and aborts `controller` when the lease was lost to
 * another worker or the attempt outran its time limit. The task's `start` and `progress` webhooks,
 * when it asked for them, go out from here too (webhook-events.ts).
 */
export function holdLease(
  ctx: WorkerContext,
  task: TaskRecord,
  leaseOwner: string,
  controller: AbortController,
): AttemptLease {
  const taskId = task.id;
  const events = attemptWebhookEvents(ctx, task);
  let progress: number | null = null;
  let message: string | null = null;
  let dirty = false;
  const beat = async () => {
    dirty = false;
    const held = await heartbeatTask(ctx.pool, {
      id: taskId,
      leaseOwner,
      leaseMs: ctx.leaseMs,
      progress,
      message,
    }).catch(() => true); // a failed heartbeat is retried; the lease decides, not one query
    if (!held) controller.abort(new Error(LEASE_LOST));
  };
  const heartbeat = setInterval(() => void beat(), Math.max(100, ctx.leaseMs / 3));
  const progressFlush = setInterval(() => dirty && void beat(), ctx.progressFlushMs);
  const deadline = setTimeout(
    () => controller.abort(new Error(`the attempt took longer than ${ctx.attemptTimeoutMs / 1000} s`)),
    ctx.attemptTimeoutMs,
  );
  return {
    progress(fraction, text) {
      progress = Math.min(1, Math.max(0, fraction));
      message = text ?? null;
      dirty = true;
      events?.progress(progress);
    },
    stop() {
      clearInterval(heartbeat);
      clearInterval(progressFlush);
      clearTimeout(deadline);
      return events?.stop() ?? Promise.resolve();
    },
  };
}
