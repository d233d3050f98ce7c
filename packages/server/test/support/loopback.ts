/**
 * The pieces every end-to-end test (and the engine benchmark) puts on loopback: a free port, a
 * file server for input images, and the real API with in-process workers over a test database.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Pool } from '@imagegen/db';
import type { EngineRegistry } from '@imagegen/engines';
import { createAuthenticator } from '../../src/auth/authenticator.ts';
import { readStartConfig } from '../../src/cli/start-config.ts';
import { createImageFetcher } from '../../src/fetch/image-fetcher.ts';
import { withStoredFiles } from '../../src/fetch/stored-files.ts';
import type { ApiOptions } from '../../src/http/api-app.ts';
import { buildApiRole } from '../../src/http/api-role.ts';
import { type Logger, lineLog } from '../../src/observability/logger.ts';
import type { Metrics } from '../../src/observability/metrics.ts';
import type { BlobStore } from '../../src/storage/blob-store.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';
import { startWorker, type WorkerOptions } from '../../src/tasks/index.ts';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface FileServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `files` (path → [content type, bytes], whatever the query) on a loopback port; anything else answers 404. */
export async function serveFiles(files: Record<string, readonly [string, Buffer]>): Promise<FileServer> {
  const server = createServer((request, response) => {
    const file = files[(request.url ?? '').split('?')[0]!];
    if (file) response.writeHead(200, { 'content-type': file[0] }).end(file[1]);
    else response.writeHead(404).end('not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface LoopbackApi {
  readonly url: string;
  /** Starts one more worker on the same API (for example an enterprise server's, with `serverId`). */
  addWorker(options?: Partial<WorkerOptions>): void;
  /** Stops the workers (they drain), then the API, and removes the stored files. */
  close(): Promise<void>;
}

/**
 * The API as `npm start` builds it (`buildApiRole`), on a free loopback port: a local blob store in a temporary
 * folder (or the given store), and one in-process worker (none with `withWorker: false`, more with `addWorker`) that
 * reads our own /files links from the store and fetches other inputs over loopback. Worker
 * options override the test defaults (quick polls and retries).
 */
export async function startLoopbackApi(options: {
  pool: Pool;
  engines: EngineRegistry;
  worker?: Partial<WorkerOptions>;
  /** false: no worker starts with the API (tasks only queue; `addWorker` starts one). */
  withWorker?: boolean;
  /** The settings `npm start` would read (README's configuration table), e.g. `AUTH_FAILURE_BURST`. */
  env?: NodeJS.ProcessEnv;
  /** Observes every route as it is registered (the route-table tests list what is served). */
  onRoute?: ApiOptions['onRoute'];
  /** The clock the wrong-key allowances refill by (default Date.now). */
  authClock?: ApiOptions['authClock'];
  /** The webhook outbox, for the workers and the API's cancels alike (default: no webhooks). */
  enqueueWebhook?: ApiOptions['enqueueWebhook'];
  eventsKeepAliveMs?: number;
  /** Where files go (default: a local store in a temporary folder). */
  store?: BlobStore;
  /** The process's metrics, given to the API and every worker. */
  metrics?: Metrics;
  /** JSON logs of the API and the workers (component api and worker). */
  logger?: Logger;
  /** Removes a deleted model's file from the model folders (default: the row only). */
  removeModelFiles?: ApiOptions['removeModelFiles'];
  /** How often owners may redeliver a webhook (default: the API's own). */
  redeliveryLimits?: ApiOptions['redeliveryLimits'];
  /** The OpenAI Images API's model table and wait (default: the built-in table, 300 s). */
  openAi?: ApiOptions['openAi'];
  /** MCP tool calls' wait and largest inline image (default: 300 s, 2 MiB). */
  mcp?: ApiOptions['mcp'];
}): Promise<LoopbackApi> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'imagegen-loopback-'));
  const store = options.store ?? new LocalBlobStore(path.join(dataDir, 'files'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // The API as `npm start` builds it, for the settings `npm start` reads (its defaults, with this
  // port and address, and whatever `env` sets).
  const settings = readStartConfig({ ...options.env, API_PORT: String(port), PUBLIC_URL: url });
  const { app } = await buildApiRole(settings, options.env ?? {}, {
    pool: options.pool,
    authenticator: createAuthenticator(options.pool),
    store,
    engines: () => options.engines.describe(),
    // The shipped engine that draws labelled placeholders, as `npm start` names it.
    placeholderEngines: ['sandbox'],
    admit: (pipeline, input) => options.engines.admit(pipeline, input),
    readiness: {
      checks: {
        api: async () => {
          await options.pool.query('SELECT 1');
        },
      },
      stopping: false,
    },
    ...(options.onRoute ? { onRoute: options.onRoute } : {}),
    ...(options.authClock ? { authClock: options.authClock } : {}),
    ...(options.enqueueWebhook ? { enqueueWebhook: options.enqueueWebhook } : {}),
    ...(options.eventsKeepAliveMs ? { eventsKeepAliveMs: options.eventsKeepAliveMs } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.logger ? { logger: options.logger.child({ component: 'api' }) } : {}),
    ...(options.removeModelFiles ? { removeModelFiles: options.removeModelFiles } : {}),
    ...(options.redeliveryLimits ? { redeliveryLimits: options.redeliveryLimits } : {}),
    ...(options.openAi ? { openAi: options.openAi } : {}),
    ...(options.mcp ? { mcp: options.mcp } : {}),
  });
  await app.listen({ port, host: '127.0.0.1' });

  const stop = new AbortController();
  const workers: Promise<void>[] = [];
  const addWorker = (extra: Partial<WorkerOptions> = {}) => {
    const worker = startWorker({
      pool: options.pool,
      engines: options.engines,
      fetcher: withStoredFiles(createImageFetcher({ allowPrivate: true }), store, url),
      store,
      publicUrl: url,
      signal: stop.signal,
      pollMs: 200,
      retryBaseMs: 10,
      ...(options.enqueueWebhook ? { enqueueWebhook: options.enqueueWebhook } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.logger ? { log: lineLog(options.logger.child({ component: 'worker' })) } : {}),
      ...options.worker,
      ...extra,
    });
    workers.push(worker.stopped);
  };
  if (options.withWorker !== false) addWorker();
  return {
    url,
    addWorker,
    async close() {
      stop.abort();
      await Promise.all(workers);
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
