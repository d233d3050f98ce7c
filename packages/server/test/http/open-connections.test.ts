import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { endStalledConnectionsOnClose, watchConnections } from '../../src/http/open-connections.ts';
import { eventually } from '../support/fakes.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function listening(handler: Parameters<typeof createServer>[1]) {
  const server = createServer(handler);
  const connections = watchConnections(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { connections, port: (server.address() as { port: number }).port };
}

/** A raw client connection that has sent `text`; `received` is what came back so far. */
async function open(port: number, text: string) {
  const socket: Socket = connect(port, '127.0.0.1');
  cleanups.push(() => socket.destroy());
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(text);
  return { socket, closed, received: () => received };
}

/** Waits until `check` holds, or fails after 3 s. */
const until = (check: () => boolean) => eventually(async () => (check() ? true : undefined), 3_000);

describe('open connections, as a drain reports them', () => {
  it('says none is open when none is', async () => {
    const { connections } = await listening((_req, res) => res.end('ok'));
    expect(connections.describe()).toBe('no connection open');
  });

  it('names the request a connection is still answering, and a kept-alive one that answers nothing', async () => {
    let answered = 0;
    const { connections, port } = await listening((req, res) => {
      // The slow request is never answered while the test looks.
      if (req.url?.startsWith('/slow')) return;
      answered++;
      res.end('ok');
    });
    const idle = await open(port, 'GET /quick HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => answered === 1);
    await open(port, 'GET /slow?x=1 HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => connections.describe().includes('/slow'));
    const report = connections.describe();
    expect(report).toMatch(/^2 connections open: /);
    expect(report).toMatch(/127\.0\.0\.1:\d+ answering GET \/slow\?x=1, open \d+ s/);
    expect(report).toContain(
      `127.0.0.1:${idle.socket.localPort} with no answer in progress, open 0 s, 32 bytes read`,
    );
  });

  it('counts a request whose headers have not all come as no answer in progress, with the bytes it sent', async () => {
    const { connections, port } = await listening((_req, res) => res.end('ok'));
    const headers = 'POST /sd/text2image/v1 HTTP/1.1\r\nHost: x\r\n';
    const partial = await open(port, headers);
    await until(() => connections.describe().includes(`${headers.length} bytes read`));
    expect(connections.describe()).toBe(
      `1 connection open: 127.0.0.1:${partial.socket.localPort} with no answer in progress, open 0 s, ${headers.length} bytes read`,
    );
  });

  it('says which answer still waits for its body', async () => {
    const { connections, port } = await listening(() => {});
    await open(port, 'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc');
    await until(() => connections.describe().includes('answering'));
    expect(connections.describe()).toMatch(/answering POST \/upload \(its body still arriving\), open 0 s$/);
  });

  it('leaves an answer the client reads slowly to reach it whole, though its route has ended it', async () => {
    // Larger than the socket's buffers: the answer's end waits for the client to read.
    const size = 16 * 1024 * 1024;
    const { connections, port } = await listening((_req, res) => res.end(Buffer.alloc(size, 1)));
    const socket = connect(port, '127.0.0.1');
    cleanups.push(() => socket.destroy());
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.pause();
    let bytes = 0;
    socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
    socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => connections.describe().includes('answering'));
    expect(connections.describe()).toMatch(
      /^1 connection open: 127\.0\.0\.1:\d+ answering GET \/big, open 0 s$/,
    );
    expect(connections.endUnanswered()).toBe(0);
    socket.resume();
    await until(() => bytes > size);
    expect(bytes).toBeGreaterThan(size);
  });

  it('names five connections and counts the rest', async () => {
    const { connections, port } = await listening((_req, res) => res.end('ok'));
    for (let i = 0; i < 7; i++) await open(port, '');
    await until(() => connections.describe().startsWith('7 '));
    expect(connections.describe()).toMatch(/^7 connections open: (127\.0\.0\.1:\d+ [^;]+; ){5}and 2 more$/);
  });

  it('forgets a connection once it has closed', async () => {
    const { connections, port } = await listening((_req, res) => res.end('ok'));
    const { socket } = await open(port, '');
    await until(() => connections.describe().startsWith('1 '));
    socket.destroy();
    await until(() => connections.describe() === 'no connection open');
    expect(connections.describe()).toBe('no connection open');
  });
});

describe('a closing Fastify app', () => {
  async function app(graceMs: number) {
    const fastify = Fastify();
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    fastify.get('/slow', async () => {
      await released;
      return { done: true };
    });
    fastify.post('/upload', async (request) => ({ got: (request.body as string).length }));
    fastify.addContentTypeParser('text/plain', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    const connections = endStalledConnectionsOnClose(fastify, graceMs);
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    cleanups.push(() => void fastify.close());
    return { fastify, connections, release, port: (fastify.server.address() as { port: number }).port };
  }

  it('ends a connection with half a request after the grace, so the close ends', async () => {
    const { fastify, port } = await app(300);
    const half = await open(port, 'GET /slow HTTP/1.1\r\nHost: x\r\n');
    const started = Date.now();
    await fastify.close();
    await half.closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('ends an upload whose body stops coming after the grace', async () => {
    const { fastify, connections, port } = await app(300);
    const upload = await open(
      port,
      'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nabc',
    );
    await until(() => connections.describe().includes('its body still arriving'));
    await fastify.close();
    await upload.closed;
    expect(upload.received()).toBe('');
  });

  it('lets an answer in progress finish, however long past the grace, then ends its kept-alive connection', async () => {
    const { fastify, connections, release, port } = await app(100);
    const waiting = await open(port, 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => connections.describe().includes('answering GET /slow'));
    const closed = fastify.close();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(connections.describe()).toMatch(
      /^1 connection open: 127\.0\.0\.1:\d+ answering GET \/slow, open 0 s$/,
    );
    release();
    await closed;
    await waiting.closed;
    expect(waiting.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"done":true\}$/);
  });

  it('ends a close with no connection open at once, leaving no timer behind', async () => {
    const { fastify } = await app(60_000);
    const started = Date.now();
    await fastify.close();
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
