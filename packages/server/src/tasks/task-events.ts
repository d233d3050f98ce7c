import { type Listener, listen, type Pool } from '@imagegen/db';
import type { TaskState } from './types.ts';

/**
 * Where the tasks table announces each change a status reader can see (state, progress): the
 * trigger of 0008_task_control.sql sends '<id> <version> <state>' when the change commits. A new
 * preview of a running task is announced there too, as '<id> preview <seq>' (saveTaskPreview).
 */
export const TASK_EVENTS_CHANNEL = 'imagegen_task_events';

/** One announced change: the task's new version, and its state (`cancelled` for a cancelled task). */
export interface TaskChange {
  readonly id: string;
  readonly version: number;
  readonly state: TaskState | 'cancelled';
}

/**
 * Called with each change of the watched task (or of every task), and with null whenever
 * listening (re)starts: changes announced while nobody listened are lost, so re-read what you watch.
 */
export type TaskChangeHandler = (change: TaskChange | null) => void;

/**
 * The change feed of one pool's database, fanned out in this process: one LISTEN connection
 * however many streams, waiting submissions and running attempts watch, held only while someone
 * does. Per pool, like the submitters' announcer.
 */
export function taskEvents(pool: Pool, log: (line: string) => void = () => {}): TaskEvents {
  let events = feeds.get(pool);
  if (!events) {
    events = new TaskEvents(pool, log);
    feeds.set(pool, events);
  }
  return events;
}

const feeds = new WeakMap<Pool, TaskEvents>();

/** Handlers of every task's changes are filed under this key. */
const EVERY_TASK = '*';

/** Called with the sequence number of each new preview of the watched task. */
export type PreviewHandler = (seq: number) => void;

export class TaskEvents {
  private readonly handlers = new Map<string, Set<TaskChangeHandler>>();
  private readonly previewHandlers = new Map<string, Set<PreviewHandler>>();
  private subscribers = 0;
  private listening: Promise<Listener> | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Calls `handler` with the changes of task `id` (every task's without one) until the returned
   * function is called. Resolves once the feed is listened to, so a status read made after it
   * misses no change.
   */
  subscribe(handler: TaskChangeHandler, id?: string): Promise<() => void> {
    return this.add(this.handlers, id ?? EVERY_TASK, handler);
  }

  /**
   * Calls `handler` with each new preview of task `id` until the returned function is called (a
   * preview announced while the feed was not listened to is lost: read the newest when it starts).
   */
  subscribePreviews(id: string, handler: PreviewHandler): Promise<() => void> {
    return this.add(this.previewHandlers, id, handler);
  }

  private async add<H>(handlers: Map<string, Set<H>>, key: string, handler: H): Promise<() => void> {
    let set = handlers.get(key);
    if (!set) {
      set = new Set();
      handlers.set(key, set);
    }
    set.add(handler);
    this.subscribers++;
    this.listening ??= listen(this.pool, TASK_EVENTS_CHANNEL, (payload) => this.dispatch(payload), this.log);
    await this.listening;
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      const left = handlers.get(key);
      left?.delete(handler);
      if (left?.size === 0) handlers.delete(key);
      if (--this.subscribers === 0) this.stopListening();
    };
  }

  /** Nobody watches: the connection goes back to the pool (a pool that ends must get it back). */
  private stopListening(): void {
    const listening = this.listening;
    this.listening = null;
    void listening?.then((listener) => listener.close()).catch(() => {});
  }

  private dispatch(payload: string | null): void {
    if (payload === null) {
      for (const set of this.handlers.values()) for (const handler of set) this.call(() => handler(null));
      return;
    }
    const [id, what, seq] = payload.split(' ');
    if (what === 'preview') {
      for (const handler of this.previewHandlers.get(id ?? '') ?? []) this.call(() => handler(Number(seq)));
      return;
    }
    const change = parseChange(payload);
    if (!change) return;
    for (const key of [change.id, EVERY_TASK]) {
      for (const handler of this.handlers.get(key) ?? []) this.call(() => handler(change));
    }
  }

  private call(handle: () => void): void {
    try {
      handle();
    } catch (error) {
      this.log(`a task change handler failed: ${(error as Error).message}`);
    }
  }
}

function parseChange(payload: string): TaskChange | null {
  const [id, version, state] = payload.split(' ');
  if (!id || !version || !state) return null;
  return { id, version: Number(version), state: state as TaskChange['state'] };
}
