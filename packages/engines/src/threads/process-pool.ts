import type { ChildProcess } from 'node:child_process';
import { startChild } from './start-child.ts';

/**
 * Work kept out of this process: each request runs in a child process (its own libuv thread pool,
 * heap and native memory), one request per child at a time, oldest first. What runs there cannot
 * fill the thread pool that this process's file reads and DNS share, nor keep the memory it
 * took. Unlike a thread, a child can be stopped at any moment: a request whose signal aborts, or
 * that runs past its time, has its child killed, and the next request starts a fresh one. So a
 * child should hold nothing worth keeping between requests.
 *
 * Children start on demand and leave after `idleMs` without work, but for `warm` of them, which
 * stay (started ahead with warmUp()) so the next request does not wait for a process to start; a
 * request `retire` names (a large one) sends its child away once answered, with what it took.
 * Idle children keep no parent alive, and a child whose parent dies exits with it (its channel
 * closes).
 */
export class ProcessPool<Request, Result> {
  private readonly children: Child<Request, Result>[] = [];
  private readonly queue: Job<Request, Result>[] = [];
  private nextId = 1;
  private closed = false;

  /**
   * @param module the child's module, a file URL (`new URL('./x-process.ts', import.meta.url)`),
   *   which answers with serveChild
   */
  constructor(
    private readonly module: URL,
    readonly options: {
      readonly size: number;
      readonly idleMs: number;
      /** Children kept when idle (default none). */
      readonly warm?: number;
      /** Whether a request's child leaves once it has answered it (its memory with it). */
      readonly retire?: (request: Request) => boolean;
    },
  ) {}

  /** Starts children, idle, until `warm` run. */
  warmUp(): void {
    while (!this.closed && this.children.length < (this.options.warm ?? 0)) {
      const child = this.spawn();
      if (!child) return;
      this.rest(child);
    }
  }

  /**
   * Runs one request in a child. Rejects with the signal's reason when it aborts, with
   * ChildTimeoutError past `timeoutMs`, and with ChildStoppedError when the child dies under it
   * (out of memory, a crash in native code): in each case the child is gone.
   */
  run(request: Request, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<Result> {
    if (this.closed) return Promise.reject(new Error('the process pool is closed'));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Result>((resolve, reject) => {
      const job: Job<Request, Result> = {
        id: this.nextId++,
        request,
        timeoutMs: options.timeoutMs,
        resolve,
        reject,
        settled: false,
      };
      const onAbort = () => this.stop(job, signal!.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      job.cleanup = () => signal?.removeEventListener('abort', onAbort);
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Rejects what waits and stops every child, busy or not. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job, new Error('the process pool is closed'));
    await Promise.all(
      this.children.map((child) => this.kill(child, new Error('the process pool is closed'))),
    );
  }

  /** Children running now (busy or idle). */
  get size(): number {
    return this.children.length;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const child = this.children.find((candidate) => !candidate.busy) ?? this.spawn();
      if (!child) return;
      const job = this.queue.shift()!;
      clearTimeout(child.idle);
      child.busy = job;
      child.process.ref();
      child.process.channel?.ref();
      if (job.timeoutMs !== undefined) {
        job.timer = setTimeout(() => this.stop(job, new ChildTimeoutError(job.timeoutMs!)), job.timeoutMs);
      }
      child.process.send({ id: job.id, request: job.request });
    }
  }

  private spawn(): Child<Request, Result> | undefined {
    if (this.closed || this.children.length >= this.options.size) return undefined;
    const process = startChild(this.module);
    let exited: () => void = () => {};
    const child: Child<Request, Result> = {
      process,
      busy: undefined,
      exited: new Promise<void>((resolve) => {
        exited = resolve;
      }),
    };
    process.once('exit', (code, signal) => {
      const at = this.children.indexOf(child);
      if (at >= 0) this.children.splice(at, 1);
      clearTimeout(child.idle);
      const job = child.busy;
      child.busy = undefined;
      if (job) this.settle(job, new ChildStoppedError(signal ?? `exit code ${code}`));
      exited();
      this.dispatch();
    });
    process.on('message', (reply: ChildReply<Result>) => {
      const job = child.busy;
      if (!job || job.id !== reply.id) return;
      child.busy = undefined;
      if (reply.ok) this.settle(job, undefined, reply.result);
      else this.settle(job, new Error(reply.error));
      if (this.options.retire?.(job.request)) {
        // Out of the pool at once, so the next request starts another; the warm one too.
        this.children.splice(this.children.indexOf(child), 1);
        child.process.disconnect();
        this.warmUp();
      } else this.rest(child);
      this.dispatch();
    });
    // A failed spawn or a broken channel: the 'exit' that follows settles the job.
    process.on('error', () => process.kill('SIGKILL'));
    this.children.push(child);
    return child;
  }

  /** An idle child: lets the parent exit without it, and leaves after idleMs unless it is kept warm. */
  private rest(child: Child<Request, Result>): void {
    child.process.unref();
    child.process.channel?.unref();
    const leave = () => {
      if (child.busy || !child.process.connected) return;
      if (this.children.length <= (this.options.warm ?? 0)) return;
      this.children.splice(this.children.indexOf(child), 1);
      child.process.disconnect();
    };
    child.idle = setTimeout(leave, this.options.idleMs);
    child.idle.unref();
  }

  /** Stops a job: dropped while it waits, its child killed while it runs. */
  private stop(job: Job<Request, Result>, reason: unknown): void {
    const at = this.queue.indexOf(job);
    if (at >= 0) {
      this.queue.splice(at, 1);
      this.settle(job, reason);
      return;
    }
    const child = this.children.find((candidate) => candidate.busy === job);
    if (child) void this.kill(child, reason);
  }

  private kill(child: Child<Request, Result>, reason: unknown): Promise<void> {
    const job = child.busy;
    if (job) this.settle(job, reason);
    child.process.kill('SIGKILL');
    return child.exited;
  }

  private settle(job: Job<Request, Result>, error: unknown, result?: Result): void {
    if (job.settled) return;
    job.settled = true;
    clearTimeout(job.timer);
    job.cleanup?.();
    if (error === undefined) job.resolve(result as Result);
    else job.reject(error);
  }
}

/** The request ran past its time; its child was killed. */
export class ChildTimeoutError extends Error {
  override readonly name = 'ChildTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`the work took longer than ${timeoutMs / 1000} s`);
  }
}

/** The child died while it held the request (a crash, out of memory, killed from outside). */
export class ChildStoppedError extends Error {
  override readonly name = 'ChildStoppedError';
  constructor(how: string) {
    super(`the worker process stopped (${how})`);
  }
}

interface Job<Request, Result> {
  readonly id: number;
  readonly request: Request;
  readonly timeoutMs: number | undefined;
  resolve(result: Result): void;
  reject(error: unknown): void;
  settled: boolean;
  timer?: NodeJS.Timeout;
  cleanup?: () => void;
}

interface Child<Request, Result> {
  readonly process: ChildProcess;
  busy: Job<Request, Result> | undefined;
  idle?: NodeJS.Timeout;
  readonly exited: Promise<void>;
}

export interface ChildRequest<Request> {
  readonly id: number;
  readonly request: Request;
}

export type ChildReply<Result> =
  | { readonly id: number; readonly ok: true; readonly result: Result }
  | { readonly id: number; readonly ok: false; readonly error: string };
