/**
 * `npm start`: the embedded default in one process. The bundled PostgreSQL under
 * IMAGEGEN_DATA_DIR (./data) unless DATABASE_URL, migrations, the API on API_PORT (8000), an
 * in-process worker, the webhook dispatcher, and the documentation site with its search on
 * DOCS_PORT (3000); the root `prestart` script builds the site when a fresh clone has no build.
 *
 * IMAGEGEN_ROLES=api,worker,webhooks,docs (default all four) runs a part of that instead, so a
 * fleet is the same program started with different lists: APIs behind a load balancer, workers
 * on the GPU machines, all on one PostgreSQL and one bucket (S3_BUCKET). Every process answers
 * /health/live and /health/ready: on API_PORT with the api role, else on HEALTH_PORT.
 *
 * SIGINT/SIGTERM drain: readiness turns 503, the API stops accepting and answers what it holds,
 * the worker stops claiming and its running tasks get SHUTDOWN_GRACE_MS to finish before they are
 * released to the queue for another worker; nothing acknowledged is lost. Then it exits 0.
 *
 * Each worker also sweeps what has outlived its retention (RETENTION_*_DAYS, every
 * RETENTION_SWEEP_SECONDS): the server's retention/sweeper.ts.
 *
 * The one place that knows every part: the roles come from @imagegen/server and the docs host from
 * @imagegen/docs, so neither of those packages depends on the other.
 */

import { createPool, type Pool } from '@imagegen/db';
import { type DocsHost, docsBuilt, startDocsSite } from '@imagegen/docs/host';
import { modelFileRemoverFromEnv } from '@imagegen/engine-comfyui';
import { type EngineSetup, servedEngineNotes, setUpEngines } from '@imagegen/engines';
import {
  blobStoreFromEnv,
  buildApiRole,
  buildHealthApp,
  createAuthenticator,
  createFirstOwner,
  endStalledConnectionsOnClose,
  enqueueWebhook,
  ensureApiKey,
  firstOwner,
  imageFetcherFromEnv,
  LocalBlobStore,
  lineLog,
  loggerFromEnv,
  metricsFromEnv,
  metricsHandler,
  modelFetcherFromEnv,
  mountMetrics,
  type OpenConnections,
  openDatabase,
  promptEnhancerFromEnv,
  type Readiness,
  ROLES,
  readStartConfig,
  runRetentionSweeper,
  startWebhookDispatcher,
  startWorker,
  taskLimitsFromEnv,
  withStoredFiles,
} from '@imagegen/server';
import type { FastifyInstance } from 'fastify';
import { type DrainStep, drain } from './drain.ts';
import { PLACEHOLDER_ENGINES, SHIPPED_ENGINES } from './shipped-engines.ts';
import { startBanner } from './start-banner.ts';

// JSON lines on stdout (LOG_LEVEL); every listener of the process serves its metrics at /metrics.
const logger = loggerFromEnv(process.env);
const log = (line: string) => logger.info(line);
const metrics = metricsFromEnv(process.env);

async function main(): Promise<void> {
  const config = readStartConfig(process.env);
  const { roles } = config;
  const store = blobStoreFromEnv(process.env);
  if (roles.size < ROLES.length && store instanceof LocalBlobStore) {
    log(
      `warning: files are kept on this machine (${store.dir}); processes on other machines cannot read them: set S3_BUCKET`,
    );
  }
  // The API shows the engines on /health; the worker runs them.
  let engines: EngineSetup | null = null;
  if (roles.has('api') || roles.has('worker')) {
    engines = await setUpEngines(
      SHIPPED_ENGINES,
      process.env,
      (line) => log(`engines: ${line}`),
      modelFetcherFromEnv(process.env),
    );
    for (const warning of engines.warnings) log(`warning: ${warning}`);
  }
  const background = roles.has('worker') || roles.has('webhooks');
  const foreground = roles.has('api') || roles.has('docs');

  const db = await openDatabase({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    applicationName: roles.has('api') ? 'imagegen-api' : `imagegen-${[...roles].join('-')}`,
    poolSize: foreground ? config.poolSize : config.workerPoolSize,
    log: (line) => process.env.IMAGEGEN_DEBUG && log(`postgres: ${line}`),
  });
  log(`database: ${db.origin}; roles: ${[...roles].join(', ')}`);
  // The worker and the dispatcher get their own connections, so a burst of polls cannot starve
  // the heartbeats that keep a running task's lease.
  const workerPool =
    background && foreground
      ? createPool(db.url, { max: config.workerPoolSize, applicationName: 'imagegen-worker' })
      : db.pool;
  const checks: Record<string, () => Promise<void>> = {};
  const readiness: Readiness = { checks, stopping: false };
  const stop = new AbortController();
  // What a drain waits for besides the servers, by name (drain.ts logs the ones still running).
  const running: DrainStep[] = [];

  let app: FastifyInstance | null = null;
  // What the API's open connections are doing, for a drain that waits on them.
  let apiConnections: OpenConnections | undefined;
  let key: { key: string; created: boolean } | null = null;
  if (roles.has('api') && engines) {
    const setup = engines;
    key = await prepareKey(db.pool, config.apiKey);
    const removeModelFiles = modelFileRemoverFromEnv(process.env);
    // Built as the test suites build it (buildApiRole): the same routes for the same settings.
    // The routes are logged at debug level, so a test can hold the program's table to the suites'.
    const apiLogger = logger.child({ component: 'api' });
    const routes: string[] = [];
    const api = await buildApiRole(config, process.env, {
      onRoute: (route) => {
        for (const method of [route.method].flat()) routes.push(`${method} ${route.url}`);
      },
      pool: db.pool,
      authenticator: createAuthenticator(db.pool),
      store,
      engines: () => setup.registry.describe(),
      placeholderEngines: PLACEHOLDER_ENGINES,
      // /openapi.json appends the notes of the engines this process serves, and of no other.
      notes: await servedEngineNotes(
        SHIPPED_ENGINES,
        setup.registry.describe().map((engine) => engine.name),
      ),
      // A request the serving engine can already tell will fail is answered 422, not queued.
      admit: (pipeline, input) => setup.registry.admit(pipeline, input),
      logger: apiLogger,
      metrics,
      enqueueWebhook,
      // A deleted model's file goes from the model folders, where this process mounts them.
      ...(removeModelFiles ? { removeModelFiles } : {}),
      readiness,
    });
    app = api.app;
    apiLogger.debug({ routes }, 'routes served');
    checks.api = () => ping(db.pool);
    apiConnections = api.connections;
    await app.listen({ port: config.apiPort, host: config.apiHost });
  }

  // Settles once the worker's engines have started (or the worker ended): its "ready" line waits.
  let workerStarted: Promise<unknown> = Promise.resolve();
  if (roles.has('worker') && engines) {
    const setup = engines;
    let stopped: string | null = null;
    const worker = startWorker({
      pool: workerPool,
      engines: setup.registry,
      preflights: setup.preflights,
      ...(setup.safety ? { safety: setup.safety } : {}),
      fetcher: withStoredFiles(imageFetcherFromEnv(process.env), store, config.publicUrl),
      store,
      publicUrl: config.publicUrl,
      enqueueWebhook,
      signal: stop.signal,
      drainMs: config.shutdownGraceMs,
      // TASK_MAX_RUN_SECONDS(_BY_PIPELINE), PLAN_CONCURRENCY.
      ...taskLimitsFromEnv(process.env),
      // PROMPT_ENHANCER_URL and its settings: the model enhance_prompt asks.
      ...promptEnhancerFromEnv(process.env),
      ...(config.serverId ? { serverId: config.serverId } : {}),
      log: lineLog(logger.child({ component: 'worker' })),
      metrics,
    });
    const ended = worker.stopped.then(
      () => {
        stopped = 'the worker has stopped';
      },
      (error: Error) => {
        stopped = `the worker failed: ${error.message}`;
        log(`error: ${stopped}`);
      },
    );
    running.push(['the worker', ended]);
    workerStarted = Promise.race([worker.ready, ended]);
    let started = false;
    void worker.ready.then(() => {
      started = true;
    });
    // Every worker sweeps what has expired; their batches skip each other's rows.
    running.push([
      'the retention sweeper',
      runRetentionSweeper({
        pool: workerPool,
        store,
        policy: config.retention,
        intervalMs: config.retentionSweepMs,
        signal: stop.signal,
        log: lineLog(logger.child({ component: 'retention' })),
        metrics,
      }),
    ]);
    checks.worker = async () => {
      if (stopped) throw new Error(stopped);
      if (setup.registry.describe().length === 0) throw new Error('no engine loaded');
      // Until then it says what: fetching the model manifest, warming up a server.
      if (!started) throw new Error(`engines starting${withWhat(setup.registry.startup())}`);
      await ping(workerPool);
    };
  }

  if (roles.has('webhooks')) {
    let stopped = false;
    const dispatcher = startWebhookDispatcher({
      pool: workerPool,
      signal: stop.signal,
      allowPrivate: process.env.IMAGEGEN_ALLOW_PRIVATE_URLS === '1',
      log: lineLog(logger.child({ component: 'webhooks' })),
      metrics,
    });
    running.push(['the webhook dispatcher', dispatcher.stopped.finally(() => (stopped = true))]);
    checks.webhooks = async () => {
      if (stopped) throw new Error('the webhook dispatcher has stopped');
      await ping(workerPool);
    };
  }

  let docs: DocsHost | null = null;
  if (roles.has('docs')) {
    let problem = 'the documentation site is not built (npm run build:docs)';
    if (docsBuilt()) {
      try {
        docs = await startDocsSite({
          port: config.docsPort,
          host: config.apiHost,
          // The pages read the API at the address it hands out, whatever the build was told.
          apiUrl: config.publicUrl,
          pool: db.pool,
          log: (line) => log(`docs: ${line}`),
          handlers: [metricsHandler(metrics)],
        });
      } catch (error) {
        problem = `the documentation site did not start: ${(error as Error).message}`;
      }
    }
    if (!docs) log(`warning: ${problem}; not serving it`);
    checks.docs = async () => {
      if (!docs) throw new Error(problem);
    };
  }

  // Without the API, the health endpoints get a port of their own.
  let healthApp: FastifyInstance | null = null;
  let healthConnections: OpenConnections | undefined;
  if (!app) {
    healthApp = buildHealthApp(readiness);
    healthConnections = endStalledConnectionsOnClose(healthApp);
    mountMetrics(healthApp, metrics);
    // The API watches the engines for its own metrics; without it, this process does.
    if (engines) {
      const setup = engines;
      metrics.watchEngines(() => setup.registry.describe());
    }
    await healthApp.listen({ port: config.healthPort, host: config.apiHost });
  }

  if (app && engines) {
    const docsLine = docs
      ? `Documentation: ${docs.url}`
      : roles.has('docs')
        ? 'Documentation: not served (build it with npm run build:docs)'
        : 'Documentation: not served by this process (IMAGEGEN_ROLES has no docs)';
    const banner = startBanner({
      apiUrl: config.publicUrl,
      key,
      owner: key ? null : await firstOwner(db.pool),
      docsLine,
      docsUrl: docs?.url ?? null,
      engines: engines.registry.describe(),
    });
    console.log(banner);
  } else {
    await workerStarted;
    log(
      `ready: ${[...roles].join(', ')} (health: http://${config.apiHost}:${config.healthPort}/health/ready)`,
    );
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      log(`${signal} again: exiting now`);
      process.exit(130);
    }
    stopping = true;
    readiness.stopping = true;
    log(`${signal}: shutting down (running tasks finish or are released; ${signal} again to force)`);
    stop.abort();
    await drain(
      [['the API', app?.close(), apiConnections?.describe], ['the docs host', docs?.close()], ...running],
      log,
    );
    // Liveness answers until the drain is over: an orchestrator must not kill a draining worker.
    await drain([['the health server', healthApp?.close(), healthConnections?.describe]], log);
    await drain([['the engines', engines?.registry.close()]], log);
    if (workerPool !== db.pool) await drain([["the worker's database pool", workerPool.end()]], log);
    await drain([['the database', db.close()]], log);
    log('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

async function ping(pool: Pool): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    throw new Error(`database unreachable: ${(error as Error).message}`);
  }
}

/**
 * IMAGEGEN_API_KEY: that key works (created for a default UNLIMITED owner if missing). Otherwise
 * the first start (no owners yet) creates one and shows it once; later starts show none.
 */
async function prepareKey(
  pool: Pool,
  apiKey: string | undefined,
): Promise<{ key: string; created: boolean } | null> {
  if (apiKey) return { key: apiKey, created: await ensureApiKey(pool, apiKey) };
  const created = await createFirstOwner(pool);
  return created && { key: created.apiKey, created: true };
}

main().catch((error) => {
  console.error(`[imagegen] start failed: ${(error as Error).stack ?? error}`);
  process.exit(1);
});

/** `: <what>` when there is something to say, else nothing. */
function withWhat(what: string | null): string {
  return what ? `: ${what}` : '';
}
