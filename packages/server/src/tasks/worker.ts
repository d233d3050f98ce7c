import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ClaimLoop } from './claim-loop.ts';
import type { Worker, WorkerOptions } from './types.ts';
import { workerContext } from './worker-context.ts';

/**
 * Starts a worker: claims tasks (fairly, by routing), runs each on its engine with a renewed
 * lease, stores the outputs and finishes the task with its webhook in one transaction. Aborting
 * `signal` stops claiming; running tasks get `drainMs` to finish, then are released to the queue.
 *
 * Its parts, one job each: claim-loop.ts (slots, wake-ups, polling, reclaiming expired leases,
 * draining), attempt-lease.ts (heartbeat, progress, lease loss, time limit, deadline), run-task.ts (inputs,
 * checks, the engine, outputs) and settle-task.ts (the completing and failing transactions).
 */
export function startWorker(options: WorkerOptions): Worker {
  const id = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const loop = new ClaimLoop(workerContext(id, options));
  return { id, stopped: loop.run(), ready: loop.ready };
}
