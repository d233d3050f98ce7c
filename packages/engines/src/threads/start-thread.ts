import { Worker } from 'node:worker_threads';

/**
 * Whether this file runs built (the production build under `dist/`, plain JavaScript) rather than
 * as TypeScript through tsx or Vitest.
 */
const BUILT = import.meta.url.endsWith('.js');

/**
 * A worker thread running a module (a file URL, named by its TypeScript source), with `data`
 * beside the module's name in its workerData. Every thread of the engines and the server starts
 * here. Run from the sources, the thread's entry (thread-entry.mjs) registers the TypeScript
 * loader the thread does not inherit, then loads the module; run built, the thread loads the
 * module's built twin (`x.js` beside `x.ts`'s place) directly, and inherits the process's
 * `--conditions` so the packages it imports resolve to their builds too.
 */
export function startThread(module: URL, data: Record<string, unknown> = {}): Worker {
  if (BUILT) {
    const built = new URL(module.href.replace(/\.ts$/, '.js'));
    return new Worker(built, { workerData: { ...data, module: built.href } });
  }
  return new Worker(new URL('./thread-entry.mjs', import.meta.url), {
    workerData: { ...data, module: module.href },
  });
}
