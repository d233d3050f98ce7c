// Plain-JS entry of every worker thread (start-thread.ts): the server and the tests run TypeScript
// through tsx or Vitest, whose loaders a worker thread does not inherit, so the thread registers
// tsx itself (resolved from this file, whatever the current directory) and then loads the module
// named in workerData.module (a file URL).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.module);
