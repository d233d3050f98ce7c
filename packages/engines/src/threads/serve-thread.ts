import { parentPort } from 'node:worker_threads';
import type { ThreadReply, ThreadRequest } from './thread-pool.ts';

/**
 * The thread side of a {@link ThreadPool}: answers each request with what `handle` returns, one
 * at a time. A thrown error answers the request as a rejection with its message; the thread
 * lives on. `transfer` picks the buffers of a result to move rather than copy.
 */
export function serveThread<Request, Result>(
  handle: (request: Request) => Result | Promise<Result>,
  transfer: (result: Result) => ArrayBuffer[] = () => [],
): void {
  const port = parentPort;
  if (!port) throw new Error('serveThread runs on a worker thread');
  port.on('message', async ({ id, request }: ThreadRequest<Request>) => {
    let reply: ThreadReply<Result>;
    let moved: ArrayBuffer[] = [];
    try {
      const result = await handle(request);
      moved = transfer(result);
      reply = { id, ok: true, result };
    } catch (error) {
      reply = { id, ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(reply, moved);
  });
}
