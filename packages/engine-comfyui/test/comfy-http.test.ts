import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ComfyHttp } from '../src/client/comfy-http.ts';
import { ServerRefusedError, ServerUnavailableError } from '../src/contracts.ts';

/**
 * A ComfyUI killed with -9 resets every connection it had and stops listening. The client's
 * kept-alive connection then fails the next request with a reset that says nothing about the
 * server now; only a new connection, refused, says it is gone.
 */

let server: Server | undefined;
afterEach(() => server?.close());

/** A server that answers its first request, then dies as the second arrives, the way a killed process does. */
async function dyingServer(): Promise<{ url: URL; requests: () => number }> {
  let requests = 0;
  server = createServer((request, response) => {
    requests += 1;
    if (requests === 1) {
      response.end('{"ok":true}');
      return;
    }
    server!.close();
    request.socket.resetAndDestroy();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`),
    requests: () => requests,
  };
}

describe('the client on a server that dies between two requests', () => {
  it('reads once more on a new connection, which the dead server refuses at once', async () => {
    const { url, requests } = await dyingServer();
    const http = new ComfyHttp(url, 'dying', 10_000);
    try {
      expect(await http.json('GET', '/queue')).toEqual({ ok: true });
      const started = Date.now();
      const read = http.json('GET', '/history/p1');
      await expect(read).rejects.toBeInstanceOf(ServerRefusedError);
      await expect(read).rejects.toThrow('server dying is unreachable (ECONNREFUSED)');
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(requests()).toBe(2);
    } finally {
      http.close();
    }
  });

  it('does not send a write twice: the reset is the answer', async () => {
    const { url, requests } = await dyingServer();
    const http = new ComfyHttp(url, 'dying', 10_000);
    try {
      await http.json('GET', '/queue');
      const write = http.json('POST', '/prompt', { json: { prompt: {} } });
      await expect(write).rejects.toBeInstanceOf(ServerUnavailableError);
      await expect(write).rejects.not.toBeInstanceOf(ServerRefusedError);
      expect(requests()).toBe(2);
    } finally {
      http.close();
    }
  });
});
