/**
 * Test harness (used by the *.test.ts files beside it): a real API on a loopback port, over a
 * fresh database in the test cluster, with a local blob store, an in-process worker and a small
 * labelled engine that draws plain PNGs of the requested size for every pipeline.
 */
import { endpoints } from '@imagegen/contract';
import { createEngineRegistry, type Engine, type EngineJob } from '@imagegen/engines';
import sharp from 'sharp';
import { createOwner } from '../../src/auth/accounts.ts';
import type { Plan } from '../../src/auth/plans.ts';
import { upsertServer } from '../../src/auth/sql/upsertServer.ts';
import type { ApiOptions } from '../../src/http/api-app.ts';
import type { Logger } from '../../src/observability/logger.ts';
import type { Metrics } from '../../src/observability/metrics.ts';
import type { BlobStore } from '../../src/storage/blob-store.ts';
import type { WorkerOptions } from '../../src/tasks/index.ts';
import { enqueueWebhook } from '../../src/webhooks/webhook-outbox.ts';
import { type FileServer, serveFiles, startLoopbackApi } from './loopback.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';

export interface Account {
  ownerId: string;
  key: string;
}

export interface ApiHarness {
  readonly url: string;
  readonly db: TestDatabase;
  readonly alice: Account;
  readonly bob: Account;
  /** On the EPPREMIUM plan, with the enterprise server `gpu-1`. */
  readonly enterprise: Account;
  /**
   * A loopback server with /photo.png (640×480), /face.png, /not-image.txt, /truncated.png (any
   * query after the path is ignored).
   */
  readonly imagesUrl: string;
  /** Every route the API registered, as Fastify wrote it (`GET /images/v1/:image_id`). */
  readonly routes: readonly { method: string; url: string }[];
  /**
   * Starts one more worker: one serving a server id, with `serverId`; one that stops before the
   * harness closes, with `signal`.
   */
  addWorker(options?: { serverId?: string; signal?: AbortSignal }): void;
  request(method: string, route: string, options?: RequestOptions): Promise<ApiResponse>;
  /** Polls a status path until it leaves the pending states. */
  settle(statusPath: string, key: string): Promise<Record<string, unknown>>;
  /** The contract's example body of `path`, its example image URLs pointing at /photo.png here. */
  example(path: string): Record<string, unknown>;
  close(): Promise<void>;
}

export interface RequestOptions {
  key?: string | null;
  json?: unknown;
  body?: string | Buffer | FormData;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: unknown;
  bytes: Buffer;
}

/** Example bodies point at images.example.com; requests that run fetch `imageUrl` instead. */
export function withReachableImages(value: unknown, imageUrl: string): unknown {
  if (typeof value === 'string') return value.startsWith('https://images.example.com/') ? imageUrl : value;
  if (Array.isArray(value)) return value.map((item) => withReachableImages(item, imageUrl));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, withReachableImages(item, imageUrl)]),
    );
  }
  return value;
}

/** Draws what a request asks for, labelled by nothing but its size: enough for API tests. */
export function plainEngine(): Engine {
  const pipelines = endpoints
    .filter((e) => e.kind === 'generation' || e.kind === 'training')
    .map((e) => e.path)
    .filter((p) => p !== '/sync_model/v1');
  return {
    name: 'plain',
    pipelines,
    async run(job: EngineJob) {
      if (job.pipeline === '/image2prompt/v1') return { images: [], text: 'a plain test picture' };
      if (job.pipeline === '/train_model/v1')
        return { images: [], meta: { steps: job.input.max_train_steps } };
      const width = typeof job.input.width === 'number' ? job.input.width : 64;
      const height = typeof job.input.height === 'number' ? job.input.height : 64;
      const samples = typeof job.input.samples === 'number' ? job.input.samples : 1;
      const images = [];
      for (let n = 0; n < samples; n++) {
        const data = await sharp({
          create: { width, height, channels: 3, background: { r: (job.seed + n) % 256, g: 80, b: 160 } },
        })
          .png()
          .toBuffer();
        images.push({ data, contentType: 'image/png' as const, width, height });
      }
      return { images };
    },
  };
}

export interface HarnessOptions {
  /** The engine that serves every pipeline (default `plainEngine()`). */
  engine?: Engine;
  /** false: no workers, so submissions only queue (default true). */
  withWorkers?: boolean;
  /** Options of every worker over the test defaults (`enqueueWebhook`, to fill the outbox). */
  worker?: Partial<WorkerOptions>;
  /** Write webhook deliveries to the outbox (nothing delivers them): the tests count them. */
  webhooks?: boolean;
  /** Keep-alive interval of status streams (default: the API's own). */
  eventsKeepAliveMs?: number;
  /** The metrics of the API and its workers (default: the API's own registry, workers count nothing). */
  metrics?: Metrics;
  /** JSON logs of the API and its workers (default: none). */
  logger?: Logger;
  /** Where files go (default: a local store in a temporary folder). */
  store?: BlobStore;
  /** The OpenAI Images API's model table and wait (default: the built-in table, 300 s). */
  openAi?: ApiOptions['openAi'];
  /** MCP tool calls' wait and largest inline image (default: 300 s, 2 MiB). */
  mcp?: ApiOptions['mcp'];
}

export async function startApiHarness(options: HarnessOptions = {}): Promise<ApiHarness> {
  const db = await createTestDatabase();
  const account = async (name: string, plan: Plan): Promise<Account> => {
    const created = await createOwner(db.pool, { name, plan });
    return { ownerId: created.owner.id, key: created.apiKey };
  };
  const alice = await account('alice', 'STANDARD');
  const bob = await account('bob', 'BASIC');
  const enterprise = await account('acme', 'EPPREMIUM');
  await upsertServer(db.pool, { id: 'gpu-1', ownerId: enterprise.ownerId });

  const images = await startImageServer();
  const engine = options.engine ?? plainEngine();
  const engines = createEngineRegistry([engine], { enabled: [engine.name], pinned: {} });
  const routes: { method: string; url: string }[] = [];
  const withWorkers = options.withWorkers !== false;
  const api = await startLoopbackApi({
    pool: db.pool,
    engines,
    withWorker: withWorkers,
    ...(options.worker ? { worker: options.worker } : {}),
    onRoute: (route) => {
      for (const method of [route.method].flat()) routes.push({ method, url: route.url });
    },
    ...(options.webhooks ? { enqueueWebhook } : {}),
    ...(options.eventsKeepAliveMs ? { eventsKeepAliveMs: options.eventsKeepAliveMs } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.store ? { store: options.store } : {}),
    ...(options.openAi ? { openAi: options.openAi } : {}),
    ...(options.mcp ? { mcp: options.mcp } : {}),
  });
  if (withWorkers) api.addWorker({ serverId: 'gpu-1' });
  const { url } = api;

  const request = async (
    method: string,
    route: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse> => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? alice.key : options.key;
    if (key !== null) headers['API-Key'] = key;
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${url}${route}`, { method, headers, body: body as BodyInit | undefined });
    const bytes = Buffer.from(await response.arrayBuffer());
    const type = response.headers.get('content-type') ?? '';
    return {
      status: response.status,
      headers: response.headers,
      bytes,
      body: type.includes('json') && bytes.length > 0 ? JSON.parse(bytes.toString('utf8')) : undefined,
    };
  };

  const pending = new Set(['PENDING', 'queued', 'initialising', 'running', 'unknown']);
  const settle = async (statusPath: string, key: string) => {
    // A bound for a task that never ends, not a speed: generous for a busy machine.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const response = await request('GET', statusPath, { key });
      const body = response.body as Record<string, unknown>;
      if (response.status !== 200)
        throw new Error(`${statusPath}: HTTP ${response.status} ${JSON.stringify(body)}`);
      if (!pending.has(String(body.status))) return body;
      if (Date.now() > deadline) throw new Error(`${statusPath} still ${body.status} after 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  return {
    url,
    db,
    alice,
    bob,
    enterprise,
    imagesUrl: images.url,
    routes,
    addWorker: (options) => api.addWorker(options),
    request,
    settle,
    example(path) {
      const example = endpoints.find((endpoint) => endpoint.path === path)?.example;
      if (!example) throw new Error(`the contract has no example for ${path}`);
      return JSON.parse(
        JSON.stringify(example).replace(
          /https:\/\/images\.example\.com\/[A-Za-z0-9_-]+\.png/g,
          `${images.url}/photo.png`,
        ),
      );
    },
    async close() {
      await api.close();
      await images.close();
      await db.drop();
    },
  };
}

async function startImageServer(): Promise<FileServer> {
  const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3070c0' } })
    .png()
    .toBuffer();
  return serveFiles({
    '/photo.png': ['image/png', photo],
    '/face.png': ['image/png', photo],
    '/truncated.png': ['image/png', photo.subarray(0, Math.floor(photo.length / 2))],
    '/not-image.txt': ['image/png', Buffer.from('this is plain text, not a picture')],
  });
}
