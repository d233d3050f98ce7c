import type { Pool } from '@imagegen/db';
import { oneReadAtATime } from './one-read-at-a-time.ts';
import { taskEvents } from './task-events.ts';
import type { TaskStatus, TaskStatusReader } from './task-status-reader.ts';

/** A task being watched: its status when the watch began, and how to end the watch. */
export interface Watching {
  readonly task: TaskStatus;
  stop(): void;
}

/** Whether a status is final: the task succeeded or failed (cancelled tasks included). */
export function hasEnded(task: Pick<TaskStatus, 'state'>): boolean {
  return task.state === 'succeeded' || task.state === 'failed';
}

/**
 * Follows tasks for the live status streams and the waiting submissions of one API process. The
 * changes come from the process's one LISTEN (task-events.ts); on each, the task is re-read
 * through the batched status reader, so a thousand streams whose tasks change at once cost a few
 * statements, and an idle stream costs the database nothing.
 */
export class TaskWatcher {
  constructor(
    private readonly pool: Pool,
    private readonly reader: TaskStatusReader,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /**
   * The owner's task now (null: not found, as the status path says), then `onChange` with each
   * newer status (a higher version) until `stop`. Listening starts before the first read, so no
   * change falls between the two.
   */
  async watch(ownerId: string, id: string, onChange: (task: TaskStatus) => void): Promise<Watching | null> {
    let latest: TaskStatus | null = null;
    let started = false;
    let stopped = false;
    // Keeps the newest status; once the watch has begun, each newer one goes to `onChange`.
    const consider = (task: TaskStatus) => {
      if (latest && task.version <= latest.version) return;
      latest = task;
      if (started) onChange(task);
    };
    const reread = oneReadAtATime(
      async () => {
        const task = await this.reader.read(ownerId, id);
        if (task && !stopped) consider(task);
      },
      () => stopped,
      (error) => this.log(`re-reading task ${id} failed: ${error.message}`),
    );
    const unsubscribe = await taskEvents(this.pool, this.log).subscribe((change) => {
      if (!change || !latest || change.version > latest.version) void reread();
    }, id.toLowerCase());
    const stop = () => {
      stopped = true;
      unsubscribe();
    };
    const first = await this.reader.read(ownerId, id).catch((error) => {
      stop();
      throw error;
    });
    if (!first) {
      stop();
      return null;
    }
    // A change announced during this read may have been re-read already: the newer one counts.
    consider(first);
    started = true;
    return { task: latest ?? first, stop };
  }

  /**
   * Resolves with the task's final status once it ends, or null: not found, not ended within `ms`,
   * or `signal` aborted first.
   */
  async waitForEnd(
    ownerId: string,
    id: string,
    ms: number,
    signal?: AbortSignal,
  ): Promise<TaskStatus | null> {
    let finish: (task: TaskStatus | null) => void = () => {};
    const ended = new Promise<TaskStatus | null>((resolve) => {
      finish = resolve;
    });
    const watching = await this.watch(ownerId, id, (task) => {
      if (hasEnded(task)) finish(task);
    });
    if (!watching) return null;
    if (hasEnded(watching.task)) finish(watching.task);
    const timer = setTimeout(() => finish(null), ms);
    const onAbort = () => finish(null);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) finish(null);
    try {
      return await ended;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      watching.stop();
    }
  }
}
