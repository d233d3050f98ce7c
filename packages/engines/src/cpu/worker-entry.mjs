// Plain-JS entry for the engine's worker threads: the tests and the server run TypeScript through
// tsx or Vitest, whose loaders a worker thread does not inherit, so the worker registers tsx itself
// (resolved from this file, whatever the current directory) before loading the TypeScript: the
// module named in workerData.module (a path next to this file), by default the inference worker.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData?.module ?? './inference-worker.ts');
