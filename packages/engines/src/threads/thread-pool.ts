import type { Worker } from 'node:worker_threads';
import { startThread } from './start-thread.ts';

/**
 * CPU work off the event loop: a few worker threads that each load one module (which answers
 * with serveThread) and run its requests, oldest first. The process's event loop, which answers
 * the API and `/health` and keeps the worker's leases, never runs the work itself.
 *
 * Threads start on the first request and stay for the next ones (each holds what its module
 * loaded); an idle pool keeps no process alive. A request whose signal aborts while it waits is
 * dropped; one already running finishes on its thread (a thread cannot be interrupted short of
 * stopping it, which would throw away what it loaded), and its answer is ignored.
 */
export class ThreadPool<Request, Result> {
  private readonly threads: Thread<Request, Result>[] = [];
  private readonly queue: Job<Request, Result>[] = [];
  private nextId = 1;
  private closed = false;

  /**
   * @param module the thread's module, a file URL (`new URL('./x-thread.ts', import.meta.url)`)
   * @param size the most threads that run at once
   */
  constructor(
    private readonly module: URL,
    readonly size = 1,
  ) {}

  /**
   * Runs one request on a thread. `onStart` is called when a thread takes it; `transfer` lists
   * buffers of the request to move to the thread rather than copy.
   */
  run(
    request: Request,
    options: { transfer?: ArrayBuffer[]; signal?: AbortSignal; onStart?: () => void } = {},
  ): Promise<Result> {
    if (this.closed) return Promise.reject(new Error('the thread pool is closed'));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Result>((resolve, reject) => {
      const job: Job<Request, Result> = {
        id: this.nextId++,
        request,
        transfer: options.transfer ?? [],
        ...(options.onStart ? { onStart: options.onStart } : {}),
        resolve,
        reject,
      };
      signal?.addEventListener(
        'abort',
        () => {
          const at = this.queue.indexOf(job);
          if (at >= 0) this.queue.splice(at, 1);
          reject(signal.reason);
        },
        { once: true },
      );
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Requests waiting for a thread now. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Rejects what waits, lets running requests end, and stops the threads. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the thread pool is closed'));
    await Promise.all(this.threads.splice(0).map((thread) => thread.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const thread = this.threads.find((candidate) => !candidate.busy) ?? this.spawn();
      if (!thread) return;
      const job = this.queue.shift()!;
      thread.busy = job;
      job.onStart?.();
      thread.worker.ref();
      thread.worker.postMessage({ id: job.id, request: job.request }, job.transfer);
    }
  }

  private spawn(): Thread<Request, Result> | undefined {
    if (this.closed || this.threads.length >= this.size) return undefined;
    const worker = startThread(this.module);
    worker.unref();
    const thread: Thread<Request, Result> = { worker, busy: undefined };
    worker.on('message', (reply: ThreadReply<Result>) => {
      const job = thread.busy;
      thread.busy = undefined;
      worker.unref();
      if (job?.id === reply.id) {
        if (reply.ok) job.resolve(reply.result);
        else job.reject(new Error(reply.error));
      }
      this.dispatch();
    });
    // A thread that dies (out of memory, a crash in its module) fails its request; another starts.
    const lost = (error: Error) => {
      const at = this.threads.indexOf(thread);
      if (at < 0) return;
      this.threads.splice(at, 1);
      thread.busy?.reject(error);
      thread.busy = undefined;
      this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`a worker thread stopped (exit code ${code})`)));
    this.threads.push(thread);
    return thread;
  }
}

interface Job<Request, Result> {
  readonly id: number;
  readonly request: Request;
  readonly transfer: ArrayBuffer[];
  readonly onStart?: () => void;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

interface Thread<Request, Result> {
  readonly worker: Worker;
  busy: Job<Request, Result> | undefined;
}

export interface ThreadRequest<Request> {
  readonly id: number;
  readonly request: Request;
}

export type ThreadReply<Result> =
  | { readonly id: number; readonly ok: true; readonly result: Result }
  | { readonly id: number; readonly ok: false; readonly error: string };
