import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from '@imagegen/db';
import { startWebhookDispatcher } from '../../src/webhooks/webhook-dispatcher.ts';

export interface ReceivedCall {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/**
 * A loopback receiver of webhook calls, and a dispatcher delivering the database's outbox to it.
 * Each call is answered 204 once `hold()` (if given) resolves; `received` lists the calls.
 */
export async function startWebhookReceiver(
  pool: Pool,
  options: { hold?: () => Promise<void> | null } = {},
): Promise<{ url: string; received: ReceivedCall[]; close(): Promise<void> }> {
  const received: ReceivedCall[] = [];
  const receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      received.push({
        path: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      await options.hold?.();
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  const stop = new AbortController();
  const dispatcher = startWebhookDispatcher({ pool, signal: stop.signal, allowPrivate: true, pollMs: 50 });
  return {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    received,
    async close() {
      stop.abort();
      await dispatcher.stopped;
      receiver.closeAllConnections();
      await new Promise((done) => receiver.close(done));
    },
  };
}
