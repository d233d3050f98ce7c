export { ChildStoppedError, ChildTimeoutError, ProcessPool } from './process-pool.ts';
export { serveChild } from './serve-child.ts';
export { serveThread } from './serve-thread.ts';
export { startThread } from './start-thread.ts';
export { ThreadPool } from './thread-pool.ts';
