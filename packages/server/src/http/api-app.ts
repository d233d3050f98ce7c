import { buildOpenApi, type DescriptionNotes, endpoints } from '@imagegen/contract';
import type { Pool } from '@imagegen/db';
import type { EngineDescription, EngineRegistry } from '@imagegen/engines';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RouteOptions } from 'fastify';
import { analyticsRoutes } from '../analytics/analytics-routes.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { DEFAULT_MAX_IMAGE_BYTES } from '../fetch/image-fetcher.ts';
import { mcpRoutes } from '../mcp/mcp-routes.ts';
import { observeRequests, RequestLogController } from '../observability/http-observer.ts';
import { Metrics } from '../observability/metrics.ts';
import { mountMetrics } from '../observability/metrics-endpoint.ts';
import { requestIdOf } from '../observability/request-id.ts';
import { DEFAULT_OPENAI_MODELS, type OpenAiSettings, openAiModels } from '../openai/model-table.ts';
import { openAiRoutes } from '../openai/openai-routes.ts';
import { type ModelFileRemover, QueueEstimates, TaskStatusReader, TaskWatcher } from '../tasks/index.ts';
import type { BlobStore, EnqueueWebhook } from '../tasks/types.ts';
import type { RedeliveryLimits } from '../webhooks/redelivery-limits.ts';
import { type AuthFailureLimits, apiKeyHook } from './api-key-auth.ts';
import { contractValidatorCompiler } from './contract-validation.ts';
import { installErrorHandlers } from './http-errors.ts';
import { largeBodyReader } from './large-bodies.ts';
import { lenientPath } from './lenient-path.ts';
import { acceptEveryBody } from './request-bodies.ts';
import { registerDeleteEndpoint } from './routes/deletes.ts';
import { registerFileRoutes } from './routes/files.ts';
import { registerRecordEndpoint } from './routes/records.ts';
import { type HealthSource, registerServiceInfoRoutes } from './routes/service-info.ts';
import { registerCancelEndpoint, registerEventsEndpoint } from './routes/task-control.ts';
import { registerTaskEndpoint } from './routes/tasks.ts';
import { registerUploadEndpoint } from './routes/uploads.ts';
import { answerUnroutedPaths } from './slash-redirects.ts';
import { DEFAULT_WAIT_SECONDS } from './wait-setting.ts';

/** JSON request bodies hold prompts, numbers and URLs, never image data: 1 MiB is generous. */
const JSON_BODY_LIMIT = 1024 * 1024;
const BODY_LIMITS = { json: JSON_BODY_LIMIT, image: DEFAULT_MAX_IMAGE_BYTES };

export interface ApiOptions {
  pool: Pool;
  authenticator: Authenticator;
  store: BlobStore;
  /** Absolute base of the links the API hands out, e.g. `http://localhost:8000`. */
  publicUrl: string;
  /** Engines, the pipelines they serve and their servers, for /health. */
  engines: () => EngineDescription[];
  /**
   * The names of the engines that answer with labelled placeholders (the sandbox): the task list
   * marks their tasks `placeholder: true`, whichever process ran them. Default: none.
   */
  placeholderEngines?: readonly string[];
  /**
   * What the engines this process serves add to the contract's descriptions in /openapi.json
   * (their catalogues' notes, `servedEngineNotes`). Default: none, the contract's words alone.
   */
  notes?: DescriptionNotes;
  /**
   * The serving engine's check of a validated generation request before it is queued
   * (`EngineRegistry.admit`): a refusal answers 422 located at the field. Absent: none.
   */
  admit?: EngineRegistry['admit'];
  /** TASK_MAX_INPUT_IMAGES: a request naming more image links is answered 422 (default 64). */
  maxInputImages?: number;
  /**
   * How often an owner may redeliver a webhook (WEBHOOK_REDELIVERIES_PER_DELIVERY, _PER_MINUTE;
   * default DEFAULT_REDELIVERY_LIMITS); past it the answer is 429 with Retry-After.
   */
  redeliveryLimits?: RedeliveryLimits;
  /**
   * Origins of the documentation site: they may post page views to the analytics collector
   * (which needs no API key: the browser has none). Without origins the collector is not served.
   */
  docsOrigins?: readonly string[];
  /** JSON log lines, one per request at info level, each with its request id (default: none). */
  logger?: FastifyBaseLogger;
  /**
   * The process's metrics, served at GET /metrics and fed by every request (default: the API's
   * own registry). The queue and the engines' servers are read from this API's pool and engines.
   */
  metrics?: Metrics;
  /**
   * Unknown API keys one client address (request.ip) may send before it is answered 429
   * (default: DEFAULT_AUTH_FAILURE_LIMITS; `npm start` reads authFailureLimitsFromEnv).
   */
  authFailureLimits?: AuthFailureLimits;
  /** The clock those allowances refill by (tests inject one; default Date.now). */
  authClock?: () => number;
  /** Called with every route as it is registered (the conformance test lists what is served). */
  onRoute?: (route: RouteOptions) => void;
  /** Queues the webhook of a task its caller cancels (the worker's is given to the worker). */
  enqueueWebhook?: EnqueueWebhook;
  /** How often an idle status stream sends a keep-alive comment (default 15 s). */
  eventsKeepAliveMs?: number;
  /**
   * Removes a deleted model's file from the ComfyUI model folders (COMFYUI_MODELS_DIR as this
   * process sees it); absent: a delete removes the row only.
   */
  removeModelFiles?: ModelFileRemover;
  /**
   * The OpenAI Images API's model table and wait (`openAiSettingsFromEnv`: OPENAI_MODELS,
   * OPENAI_WAIT_SECONDS). Default: the built-in table, 300 s.
   */
  openAi?: Partial<OpenAiSettings>;
  /**
   * MCP tool calls: how long one waits for its task (MCP_WAIT_SECONDS, `waitSetting`; default
   * 300 s), and the largest image answered inline (default 2 MiB; larger ones go as links).
   */
  mcp?: { readonly waitMs?: number; readonly inlineImageBytes?: number };
}

/**
 * The API: every route comes from the contract's endpoint table (plus /health, /openapi.json and
 * /files/*). Validation is the contract's, run by Fastify's validator hook on each route's
 * schema (see contract-validation.ts); the handlers only authenticate, queue and read.
 */
export async function buildApi(options: ApiOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.logger,
    // One line per request, written when it is answered (observability/http-observer.ts).
    logController: new RequestLogController(),
    genReqId: (request) => requestIdOf(request.headers['x-request-id']),
    bodyLimit: JSON_BODY_LIMIT,
    // Status polls are GETs with ids in the path; keep-alive clients poll a lot.
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    rewriteUrl: (request) => lenientPath(request.url ?? '/'),
  });
  if (options.onRoute) app.addHook('onRoute', options.onRoute);
  installErrorHandlers(app, BODY_LIMITS);
  app.setValidatorCompiler(contractValidatorCompiler);

  // Every body is read the way FastAPI reads it, whatever its Content-Type: a JSON endpoint's
  // body by the validator (contract-validation.ts), the upload's as a form (routes/uploads.ts).
  // Large JSON bodies are read and validated on a worker thread (large-bodies.ts).
  const metrics = options.metrics ?? new Metrics();
  const largeBodies = largeBodyReader(metrics);
  acceptEveryBody(app, JSON_BODY_LIMIT, largeBodies.read);
  app.addHook('onClose', async () => largeBodies.close());

  // Closing (SIGTERM): the answers still sent end their connection. A kept-alive connection that
  // turns idle after close() began would otherwise hold the close for keepAliveTimeout.
  const closing = new AbortController();
  app.addHook('onSend', function closeWhenClosing(_request, reply, payload, done) {
    if (closing.signal.aborted) reply.header('connection', 'close');
    done(null, payload);
  });

  // The docs site (another origin) reads openapi.json and its reference page calls the API.
  // Keys travel in a header, never in cookies, so any origin may call.
  app.addHook('onRequest', function corsAndRequestId(request, reply, done) {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-expose-headers', 'Preference-Applied, Idempotent-Replayed, X-Request-Id');
    reply.header('x-request-id', request.id);
    done();
  });
  // After the hook above, so a redirect and a 404 carry its headers too.
  answerUnroutedPaths(app);
  app.options('*', async (request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-methods', 'GET, POST, OPTIONS')
      .header(
        'access-control-allow-headers',
        allowedHeaders(request.headers['access-control-request-headers']),
      )
      .header('access-control-max-age', '86400')
      .send(),
  );

  const { pool, publicUrl, store } = options;
  const placeholderEngines = new Set(options.placeholderEngines);
  metrics.watchQueue(pool);
  metrics.watchEngines(options.engines);
  observeRequests(app, metrics, { logs: options.logger !== undefined });
  mountMetrics(app, metrics);
  const health: HealthSource = {
    engines: options.engines,
    async ping() {
      await pool.query('SELECT 1');
    },
  };
  // Built on the first read and kept (routes/service-info.ts): the notes are fixed at start.
  const openApi = () =>
    buildOpenApi({ serverUrl: publicUrl, ...(options.notes ? { notes: options.notes } : {}) });
  registerServiceInfoRoutes(app, { health, openApi });
  registerFileRoutes(app, store);
  if (options.docsOrigins?.length) {
    await app.register(analyticsRoutes, { pool, allowedOrigins: options.docsOrigins });
  }

  // Authenticated routes live in their own scope, so the key hook never runs for the public ones.
  const statusReader = new TaskStatusReader(pool);
  const tasks = {
    pool,
    publicUrl,
    store,
    statusReader,
    estimates: new QueueEstimates(pool),
    watcher: new TaskWatcher(pool, statusReader, (line) => app.log.warn(line)),
    closing: closing.signal,
    metrics,
    streams: new Set<() => void>(),
    ...(options.admit ? { admit: options.admit } : {}),
    ...(options.maxInputImages ? { maxInputImages: options.maxInputImages } : {}),
    ...(options.enqueueWebhook ? { enqueueWebhook: options.enqueueWebhook } : {}),
    ...(options.eventsKeepAliveMs ? { keepAliveMs: options.eventsKeepAliveMs } : {}),
  };
  // Closing: waiting submissions answer now, status streams end (clients reconnect elsewhere).
  app.addHook('preClose', (done) => {
    closing.abort();
    for (const end of [...tasks.streams]) end();
    done();
  });
  // One hook, so every way in (the API's paths, OpenAI's, MCP) shares one allowance of wrong keys.
  const authenticate = apiKeyHook(options.authenticator, {
    metrics,
    ...(options.authFailureLimits ? { failureLimits: options.authFailureLimits } : {}),
    ...(options.authClock ? { now: options.authClock } : {}),
  });
  await app.register(async (scope) => {
    scope.decorateRequest('caller', null);
    scope.addHook('onRequest', authenticate);
    for (const endpoint of endpoints) {
      switch (endpoint.kind) {
        case 'generation':
        case 'load_model':
        case 'training':
          registerTaskEndpoint(scope, endpoint, tasks);
          break;
        case 'cancel':
          registerCancelEndpoint(scope, endpoint, tasks);
          break;
        case 'events':
          registerEventsEndpoint(scope, endpoint, tasks);
          break;
        case 'upload':
          await registerUploadEndpoint(scope, endpoint, { pool, store, publicUrl });
          break;
        case 'record':
          registerRecordEndpoint(scope, endpoint, {
            pool,
            publicUrl,
            placeholderEngines,
            ...(options.redeliveryLimits ? { redeliveryLimits: options.redeliveryLimits } : {}),
          });
          break;
        case 'delete':
          registerDeleteEndpoint(scope, endpoint, {
            pool,
            ...(options.removeModelFiles ? { removeModelFiles: options.removeModelFiles } : {}),
          });
          break;
      }
    }
  });
  // The protocols other tools speak, each in a scope of its own: their hooks never run for the
  // API's own paths (hot-path.ts).
  await app.register(openAiRoutes, {
    prefix: '/v1',
    ...tasks,
    models: options.openAi?.models ?? openAiModels(DEFAULT_OPENAI_MODELS),
    waitMs: options.openAi?.waitMs ?? DEFAULT_WAIT_SECONDS * 1000,
    authenticate,
    limits: BODY_LIMITS,
  });
  await app.register(mcpRoutes, {
    ...tasks,
    waitMs: options.mcp?.waitMs ?? DEFAULT_WAIT_SECONDS * 1000,
    ...(options.mcp?.inlineImageBytes ? { inlineImageBytes: options.mcp.inlineImageBytes } : {}),
    authenticate,
    limits: BODY_LIMITS,
  });
  return app;
}

const ALLOWED_HEADERS =
  'API-Key, Content-Type, Prefer, Idempotency-Key, Cancel-After, Last-Event-ID, X-Request-Id';

/**
 * The request headers a browser may send: the API's own, and `Authorization` when the preflight
 * asks for it (a Bearer key). Only then, so a browser that sends `API-Key` gets the answer it
 * always got.
 */
function allowedHeaders(requested: string | undefined): string {
  return requested !== undefined && /(?:^|,)\s*authorization\s*(?:,|$)/i.test(requested)
    ? `${ALLOWED_HEADERS}, Authorization`
    : ALLOWED_HEADERS;
}
