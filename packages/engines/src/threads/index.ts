export { serveThread } from './serve-thread.ts';
export { ThreadPool } from './thread-pool.ts';
