import type { ChildReply, ChildRequest } from './process-pool.ts';

/**
 * The child side of a {@link ProcessPool}: answers each request with what `handle` returns. A
 * thrown error answers the request as a rejection with its message; the child lives on. The child
 * exits when its parent lets it go (the channel closes: idle, or the parent is gone).
 */
export function serveChild<Request, Result>(handle: (request: Request) => Result | Promise<Result>): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error('serveChild runs in a child process with an IPC channel');
  process.on('message', async ({ id, request }: ChildRequest<Request>) => {
    let reply: ChildReply<Result>;
    try {
      reply = { id, ok: true, result: await handle(request) };
    } catch (error) {
      reply = { id, ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    send(reply);
  });
  process.once('disconnect', () => process.exit(0));
}
