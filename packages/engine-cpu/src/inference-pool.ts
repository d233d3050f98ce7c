import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startThread } from '@imagegen/engines/threads';
import type { OpMap, OpName, WorkReply, WorkRequest } from './inference-protocol.ts';
import { modelFor, parseKeepAlive, threadsFor } from './models.ts';

/**
 * Worker threads that run the models, so the process's event loop (the API, the worker's
 * heartbeats) stays free while an image is computed. Up to one thread per core; threads start
 * when jobs need them, and each loads a model the first time it runs a job that needs it (see
 * models.ts) and keeps it. Jobs go to an idle thread that already holds their model when there is
 * one, so a model is loaded by as few threads as the load needs, and never by more threads than
 * models.ts allows it.
 *
 * A thread left idle for the keep-alive period stops, and the memory of its models (hundreds of
 * MB each: onnxruntime's arena, tfjs's WASM heap) goes back to the system with it; the next job
 * that needs them starts a thread and loads them again, as local inference servers do. A thread
 * that large work grew (its WASM memory never shrinks) stops sooner: see expire().
 */

interface Pending {
  readonly request: WorkRequest;
  /** The models the job needs (none, one, or those a load job loads). */
  readonly models: readonly string[];
  /** A job that must run on this thread (loading models onto it). */
  readonly slot?: Slot;
  readonly transfer: ArrayBuffer[];
  readonly signal: AbortSignal | undefined;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  readonly worker: Worker;
  /** The models the thread has loaded, once per load (its last reply says). */
  loads: readonly string[];
  /** The models it holds or is loading now: what placement and the per-model thread limit count. */
  models: Set<string>;
  /** Its tfjs WASM memory as its last reply said: what its work grew it to (it never shrinks). */
  heapBytes: number;
  busy: Pending | undefined;
  /** Called when the job it holds ends (close() waits on it). */
  idle?: () => void;
  /** Stops the thread once it has been idle for the keep-alive period. */
  expiry?: NodeJS.Timeout;
}

/**
 * How long close() lets each thread finish the job it holds. Jobs are short by design (one ISNet
 * pass, one upscaling patch: seconds), so this bound only matters for a thread that hangs. It is
 * generous because stopping a thread mid-run aborts the process: on a machine busy enough, a
 * model's first load and run took over 30 s.
 */
const CLOSE_WAIT_MS = 120_000;

/**
 * A thread's tfjs memory past which it is a large job's: measured on the shipped ESRGAN weights,
 * slim x4 patches of 152 pixels take it to 119 MB, the default tile (192, 216 with its context)
 * to 287 MB, 256 to 527 MB, medium x4 at 256 to 728 MB; nsfwjs and Human stay far below.
 */
const LARGE_HEAP_BYTES = 256 * 1024 * 1024;
/** How long such a thread stays idle before it stops (the keep-alive, when that is shorter). */
const LARGE_HEAP_KEEP_ALIVE_MS = 10_000;

class AbortError extends Error {
  override readonly name = 'AbortError';
}

export class InferencePool {
  readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  /**
   * @param size the most threads at once
   * @param keepAliveMs how long an idle thread keeps its models before it stops (Infinity: always)
   */
  constructor(
    size = os.availableParallelism(),
    private readonly keepAliveMs = Number.POSITIVE_INFINITY,
  ) {
    this.size = Math.max(1, size);
  }

  /** Runs one op on a worker thread that holds (or then loads) the model the op needs. */
  run<K extends OpName>(
    op: K,
    args: OpMap[K]['args'],
    options: { transfer?: ArrayBuffer[]; signal?: AbortSignal } = {},
  ): Promise<OpMap[K]['result']> {
    if (this.closed) return Promise.reject(new Error('the inference pool is closed'));
    if (options.signal?.aborted) return Promise.reject(new AbortError('aborted'));
    const { signal } = options;
    return new Promise((resolve, reject) => {
      // Aborted while it waits, the job leaves the queue; while it runs, its caller stops waiting
      // for it at once (a thread cannot be interrupted short of stopping it, which would throw
      // away its models, so the pass ends on its thread and its answer is dropped).
      const onAbort = () => {
        const at = this.queue.indexOf(pending);
        if (at >= 0) this.queue.splice(at, 1);
        reject(new AbortError('aborted'));
      };
      // Settled, the job lets go of the signal: an upscaling's thousand patches share one.
      const settled = () => signal?.removeEventListener('abort', onAbort);
      const pending: Pending = {
        request: { id: this.nextId++, op, args },
        models: [modelFor(op, args)].filter((model) => model !== undefined),
        transfer: options.transfer ?? [],
        signal,
        resolve: (value) => {
          settled();
          resolve(value as OpMap[K]['result']);
        },
        reject: (error) => {
          settled();
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(pending);
      this.dispatch();
    });
  }

  /**
   * Loads models ahead of their first job, each on as many threads as may run it (models.ts):
   * what a burst of requests would leave loaded, without the requests paying for it.
   */
  async preload(models: readonly string[]): Promise<void> {
    if (this.closed) throw new Error('the inference pool is closed');
    const threads = Math.max(0, ...models.map((model) => threadsFor(model, this.size)));
    while (this.slots.length < threads) this.spawn();
    await Promise.all(
      this.slots.slice(0, threads).map((slot, index) => {
        const onThis = models.filter((model) => index < threadsFor(model, this.size));
        return new Promise<void>((resolve, reject) => {
          this.queue.push({
            request: { id: this.nextId++, op: 'load', args: { models: onThis } },
            models: onThis,
            slot,
            transfer: [],
            signal: undefined,
            resolve: () => resolve(),
            reject,
          });
          this.dispatch();
        });
      }),
    );
  }

  /** What each thread has loaded, once per load, in load order (a model loaded twice shows twice). */
  loads(): string[][] {
    return this.slots.map((slot) => [...slot.loads]);
  }

  /** Each thread's tfjs WASM memory, in bytes, as its last reply said. */
  heaps(): number[] {
    return this.slots.map((slot) => slot.heapBytes);
  }

  /**
   * Rejects the queued jobs, lets each thread finish the job it holds, then stops the threads.
   * Stopping a thread inside onnxruntime's run aborts the whole process (a Napi::Error thrown into
   * a terminated environment), and a job can still be running when its task was released at
   * shutdown, or when it is the warm-up run after a preload.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const slot of this.slots) clearTimeout(slot.expiry);
    for (const pending of this.queue.splice(0)) pending.reject(new Error('the inference pool is closed'));
    await Promise.all(this.slots.map((slot) => jobEnded(slot)));
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  /** Starts every queued job that has a thread now, oldest first; the others keep their place. */
  private dispatch(): void {
    for (let at = 0; at < this.queue.length; ) {
      const pending = this.queue[at]!;
      const slot = this.place(pending);
      if (!slot) {
        at++;
        continue;
      }
      this.queue.splice(at, 1);
      this.start(slot, pending);
    }
  }

  /** The thread a job starts on now, or undefined when it must wait for one. */
  private place(pending: Pending): Slot | undefined {
    if (pending.slot) return pending.slot.busy ? undefined : pending.slot;
    const idle = this.slots.filter((slot) => !slot.busy);
    const [model] = pending.models;
    if (model !== undefined) {
      const holder = idle.find((slot) => slot.models.has(model));
      if (holder) return holder;
      const holders = this.slots.filter((slot) => slot.models.has(model)).length;
      if (holders >= threadsFor(model, this.size)) return undefined;
    }
    // A thread that lacks the model: spawn a fresh one while under the size, else take any idle.
    if (this.slots.length < this.size && (model !== undefined || idle.length === 0)) return this.spawn();
    return idle[0];
  }

  private start(slot: Slot, pending: Pending): void {
    clearTimeout(slot.expiry);
    for (const model of pending.models) slot.models.add(model);
    slot.busy = pending;
    slot.worker.ref();
    slot.worker.postMessage(pending.request, pending.transfer);
  }

  private spawn(): Slot {
    const worker = startThread(new URL('./inference-worker.ts', import.meta.url));
    const slot: Slot = { worker, loads: [], models: new Set(), heapBytes: 0, busy: undefined };
    worker.on('message', (reply: WorkReply) => {
      const pending = slot.busy;
      slot.busy = undefined;
      slot.idle?.();
      // The thread's own account replaces the guess made at dispatch (a load that failed is not held).
      slot.loads = reply.loads;
      slot.models = new Set(reply.loads);
      slot.heapBytes = reply.heapBytes;
      worker.unref();
      if (pending && pending.request.id === reply.id) {
        if (reply.ok) pending.resolve(reply.result);
        else pending.reject(new Error(reply.error));
      }
      this.dispatch();
      if (!slot.busy) this.expire(slot);
    });
    worker.on('error', (error) => {
      clearTimeout(slot.expiry);
      slot.busy?.reject(error);
      slot.busy = undefined;
      slot.idle?.();
      const at = this.slots.indexOf(slot);
      if (at >= 0) this.slots.splice(at, 1);
      for (const pending of this.queue.filter((p) => p.slot === slot)) {
        this.queue.splice(this.queue.indexOf(pending), 1);
        pending.reject(error);
      }
      this.dispatch();
    });
    this.slots.push(slot);
    return slot;
  }
  /**
   * Stops an idle thread after the keep-alive period, unless a job takes it first; a thread whose
   * tfjs memory grew past LARGE_HEAP_BYTES (large upscaling patches) after a short while instead,
   * so the memory a large job took goes back soon after it, as a small job's garbage does. Its
   * models load again on the next job that needs them, seconds against the minutes such a job runs.
   */
  private expire(slot: Slot): void {
    if (!Number.isFinite(this.keepAliveMs) || this.closed) return;
    const wait =
      slot.heapBytes > LARGE_HEAP_BYTES
        ? Math.min(this.keepAliveMs, LARGE_HEAP_KEEP_ALIVE_MS)
        : this.keepAliveMs;
    slot.expiry = setTimeout(() => {
      if (slot.busy || this.closed) return;
      this.slots.splice(this.slots.indexOf(slot), 1);
      // Idle, so not inside onnxruntime's run (see close()): stopping it is safe.
      void slot.worker.terminate();
    }, wait);
    slot.expiry.unref();
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

/** The inference threads the pool may run: IMAGEGEN_CPU_THREADS, else one per core. */
export function cpuThreads(): number {
  return Math.max(1, Math.floor(Number(process.env.IMAGEGEN_CPU_THREADS)) || os.availableParallelism());
}

let shared: { pool: InferencePool; users: number } | undefined;

/** The process's one pool, shared by the engine, the safety checker and the face preflight. */
export function acquirePool(): InferencePool {
  shared ??= {
    pool: new InferencePool(cpuThreads(), parseKeepAlive(process.env.IMAGEGEN_CPU_KEEP_ALIVE_MS)),
    users: 0,
  };
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
