import { Worker } from 'node:worker_threads';

/**
 * A worker thread running a TypeScript module (a file URL), with `data` beside the module's name
 * in its workerData. Every thread of the engines and the server starts here: the thread's entry
 * (thread-entry.mjs) registers the TypeScript loader the thread does not inherit, then loads it.
 */
export function startThread(module: URL, data: Record<string, unknown> = {}): Worker {
  return new Worker(new URL('./thread-entry.mjs', import.meta.url), {
    workerData: { ...data, module: module.href },
  });
}
