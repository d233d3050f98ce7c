export { serveThread } from './serve-thread.ts';
export { startThread } from './start-thread.ts';
export { ThreadPool } from './thread-pool.ts';
