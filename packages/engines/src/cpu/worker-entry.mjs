// Plain-JS entry for the inference worker threads: the tests and the server run TypeScript through
// tsx or Vitest, whose loaders a worker thread does not inherit, so the worker registers tsx itself
// (resolved from this file, whatever the current directory) before loading the TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./inference-worker.ts');
