import { type ChildProcess, fork } from 'node:child_process';

/** Whether this file runs built (plain JavaScript under `dist/`), as in start-thread.ts. */
const BUILT = import.meta.url.endsWith('.js');

/**
 * A child process running a module (a file URL, named by its TypeScript source) with an IPC
 * channel that carries Buffers (`advanced` serialization). Run from the sources, the child's entry
 * (process-entry.mjs) registers the TypeScript loader and loads the module; run built, the child
 * loads the module's built twin directly with the parent's `--conditions`, as threads do. The
 * child's standard output and error are the parent's.
 */
export function startChild(module: URL): ChildProcess {
  if (BUILT) {
    const built = new URL(module.href.replace(/\.ts$/, '.js'));
    return fork(built, [], { serialization: 'advanced', execArgv: process.execArgv });
  }
  return fork(new URL('./process-entry.mjs', import.meta.url), [module.href], {
    serialization: 'advanced',
    // The parent's flags may name its own loader (tsx's CLI, Vitest's): the entry brings its own.
    execArgv: [],
  });
}
