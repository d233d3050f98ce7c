import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { OpMap, OpName, WorkReply, WorkRequest } from './inference-protocol.ts';

/**
 * Worker threads that run the models, so the process's event loop (the API, the worker's
 * heartbeats) stays free while an image is computed. One thread per core by default; each thread
 * loads a model the first time it needs it and keeps it. Jobs go to an idle thread that already
 * holds their model when there is one, so a model is loaded by as few threads as the load needs.
 */

interface Pending {
  readonly request: WorkRequest;
  readonly model: string | undefined;
  readonly transfer: ArrayBuffer[];
  readonly signal: AbortSignal | undefined;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  readonly worker: Worker;
  readonly loaded: Set<string>;
  busy: Pending | undefined;
  /** Called when the job it holds ends (close() waits on it). */
  idle?: () => void;
}

/**
 * How long close() lets each thread finish the job it holds. Jobs are short by design (one ISNet
 * pass, one upscaling patch: seconds), so this bound only matters for a thread that hangs.
 */
const CLOSE_WAIT_MS = 30_000;

export class AbortError extends Error {
  override readonly name = 'AbortError';
}

export class InferencePool {
  readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(size = os.availableParallelism()) {
    this.size = Math.max(1, size);
  }

  /** Runs one op on a worker thread. `model` names the model it needs, for placement. */
  run<K extends OpName>(
    op: K,
    args: OpMap[K]['args'],
    options: { model?: string; transfer?: ArrayBuffer[]; signal?: AbortSignal } = {},
  ): Promise<OpMap[K]['result']> {
    if (this.closed) return Promise.reject(new Error('the inference pool is closed'));
    if (options.signal?.aborted) return Promise.reject(new AbortError('aborted'));
    return new Promise((resolve, reject) => {
      const pending: Pending = {
        request: { id: this.nextId++, op, args },
        model: options.model,
        transfer: options.transfer ?? [],
        signal: options.signal,
        resolve: resolve as (value: unknown) => void,
        reject,
      };
      options.signal?.addEventListener(
        'abort',
        () => {
          const at = this.queue.indexOf(pending);
          if (at >= 0) {
            this.queue.splice(at, 1);
            reject(new AbortError('aborted'));
          }
        },
        { once: true },
      );
      this.queue.push(pending);
      this.dispatch();
    });
  }

  /** Loads models on every thread ahead of the first job (a model per thread that may serve it). */
  async warm(models: string[]): Promise<void> {
    while (this.slots.length < this.size) this.spawn();
    await Promise.all(
      this.slots.map(
        (slot) =>
          new Promise<void>((resolve, reject) => {
            const pending: Pending = {
              request: { id: this.nextId++, op: 'warm', args: { models } },
              model: undefined,
              transfer: [],
              signal: undefined,
              resolve: () => resolve(),
              reject,
            };
            if (slot.busy) this.queue.push(pending);
            else this.start(slot, pending);
          }),
      ),
    );
  }

  /**
   * Rejects the queued jobs, lets each thread finish the job it holds, then stops the threads.
   * Stopping a thread inside onnxruntime's run aborts the whole process (a Napi::Error thrown into
   * a terminated environment), and a job can still be running when its task was released at
   * shutdown, or when it is one of the warm-up runs.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new Error('the inference pool is closed'));
    await Promise.all(this.slots.map((slot) => jobEnded(slot)));
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const idle = this.slots.filter((slot) => !slot.busy);
      if (idle.length === 0 && this.slots.length >= this.size) return;
      const pending = this.queue[0]!;
      let slot = idle.find((s) => pending.model !== undefined && s.loaded.has(pending.model));
      // A thread that lacks the model: spawn a fresh one while under the size, else take any idle.
      if (!slot && idle.length > 0 && (this.slots.length >= this.size || pending.model === undefined)) {
        slot = idle[0];
      }
      slot ??= this.spawn();
      this.queue.shift();
      this.start(slot, pending);
    }
  }

  private start(slot: Slot, pending: Pending): void {
    slot.busy = pending;
    slot.worker.ref();
    slot.worker.postMessage(pending.request, pending.transfer);
  }

  private spawn(): Slot {
    const worker = new Worker(new URL('./worker-entry.mjs', import.meta.url));
    const slot: Slot = { worker, loaded: new Set(), busy: undefined };
    worker.on('message', (reply: WorkReply) => {
      const pending = slot.busy;
      slot.busy = undefined;
      slot.idle?.();
      for (const model of reply.loaded) slot.loaded.add(model);
      worker.unref();
      if (pending && pending.request.id === reply.id) {
        if (reply.ok) pending.resolve(reply.result);
        else pending.reject(new Error(reply.error));
      }
      this.dispatch();
    });
    worker.on('error', (error) => {
      slot.busy?.reject(error);
      slot.busy = undefined;
      slot.idle?.();
      const at = this.slots.indexOf(slot);
      if (at >= 0) this.slots.splice(at, 1);
      this.dispatch();
    });
    this.slots.push(slot);
    return slot;
  }
}

function jobEnded(slot: Slot): Promise<void> {
  if (!slot.busy) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, CLOSE_WAIT_MS);
    slot.idle = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

let shared: { pool: InferencePool; users: number } | undefined;

/** The process's one pool, shared by the engine, the safety checker and the face preflight. */
export function acquirePool(): InferencePool {
  shared ??= { pool: new InferencePool(Number(process.env.IMAGEGEN_CPU_THREADS) || undefined), users: 0 };
  shared.users++;
  return shared.pool;
}

export async function releasePool(pool: InferencePool): Promise<void> {
  if (!shared || shared.pool !== pool) return;
  shared.users--;
  if (shared.users <= 0) {
    shared = undefined;
    await pool.close();
  }
}
