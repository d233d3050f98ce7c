/**
 * `npm start`: the embedded default in one process. The bundled PostgreSQL under
 * IMAGEGEN_DATA_DIR (./data) unless DATABASE_URL, migrations, the API on API_PORT (8000), an
 * in-process worker, the webhook dispatcher, and the documentation site with its search on
 * DOCS_PORT (3000); the root `prestart` script builds the site when a fresh clone has no build. SIGINT/SIGTERM drain: running tasks finish or are released for another
 * worker, in-flight requests are answered, nothing acknowledged is lost.
 */

import { createPool, type Pool } from '@imagegen/db';
import { type DocsHost, docsBuilt, startDocsSite } from '@imagegen/docs/host';
import { setUpEngines } from '@imagegen/engines';
import { createOwner, ensureApiKey } from '../auth/accounts.ts';
import { createAuthenticator } from '../auth/authenticator.ts';
import { imageFetcherFromEnv } from '../fetch/image-fetcher.ts';
import { withStoredFiles } from '../fetch/stored-files.ts';
import { buildApi } from '../http/api-app.ts';
import { lineLog, loggerFromEnv } from '../observability/logger.ts';
import { metricsFromEnv } from '../observability/metrics.ts';
import { metricsHandler } from '../observability/metrics-endpoint.ts';
import { blobStoreFromEnv } from '../storage/local-blob-store.ts';
import { startWorker } from '../tasks/index.ts';
import { startWebhookDispatcher } from '../webhooks/webhook-dispatcher.ts';
import { enqueueWebhook } from '../webhooks/webhook-outbox.ts';
import { openDatabase } from './database.ts';
import { readStartConfig } from './start-config.ts';

// JSON lines on stdout (LOG_LEVEL); every listener of the process serves its metrics at /metrics.
const logger = loggerFromEnv(process.env);
const log = (line: string) => logger.info(line);
const metrics = metricsFromEnv(process.env);

async function main(): Promise<void> {
  const config = readStartConfig(process.env);
  const engines = await setUpEngines(process.env, (line) => log(`engines: ${line}`));
  for (const warning of engines.warnings) log(`warning: ${warning}`);

  const apiDb = await openDatabase({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    applicationName: 'imagegen-api',
    log: (line) => process.env.IMAGEGEN_DEBUG && log(`postgres: ${line}`),
  });
  log(`database: ${apiDb.origin}`);
  // The worker and the dispatcher get their own connections, so a burst of polls cannot starve
  // the heartbeats that keep a running task's lease.
  const workerPool = createPool(apiDb.url, { max: 6, applicationName: 'imagegen-worker' });

  const key = await prepareKey(apiDb.pool, config.apiKey);
  const store = blobStoreFromEnv(process.env);
  const app = await buildApi({
    pool: apiDb.pool,
    authenticator: createAuthenticator(apiDb.pool),
    store,
    publicUrl: config.publicUrl,
    engines: () => engines.registry.describe(),
    docsOrigins: [`http://localhost:${config.docsPort}`, `http://127.0.0.1:${config.docsPort}`],
    logger: logger.child({ component: 'api' }),
    metrics,
    enqueueWebhook,
  });
  await app.listen({ port: config.apiPort, host: config.apiHost });

  const stop = new AbortController();
  const worker = startWorker({
    pool: workerPool,
    engines: engines.registry,
    preflights: engines.preflights,
    ...(engines.safety ? { safety: engines.safety } : {}),
    fetcher: withStoredFiles(imageFetcherFromEnv(process.env), store, config.publicUrl),
    store,
    publicUrl: config.publicUrl,
    enqueueWebhook,
    signal: stop.signal,
    ...(config.serverId ? { serverId: config.serverId } : {}),
    log: lineLog(logger.child({ component: 'worker' })),
    metrics,
  });
  const dispatcher = startWebhookDispatcher({
    pool: workerPool,
    signal: stop.signal,
    allowPrivate: process.env.IMAGEGEN_ALLOW_PRIVATE_URLS === '1',
    log: lineLog(logger.child({ component: 'webhooks' })),
    metrics,
  });

  let docs: DocsHost | null = null;
  if (docsBuilt()) {
    try {
      docs = await startDocsSite({
        port: config.docsPort,
        host: config.apiHost,
        // The pages read the API at the address it hands out, whatever the build was told.
        apiUrl: config.publicUrl,
        pool: apiDb.pool,
        log: (line) => log(`docs: ${line}`),
        handlers: [metricsHandler(metrics)],
      });
    } catch (error) {
      log(`warning: the documentation site did not start: ${(error as Error).message}`);
    }
  } else {
    log('warning: the documentation site is not built (npm run build:docs); not serving it');
  }

  printBanner(config.publicUrl, key, docs?.url ?? null, engines.registry.describe());

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      log(`${signal} again: exiting now`);
      process.exit(130);
    }
    stopping = true;
    log(`${signal}: shutting down (running tasks finish or are released; ${signal} again to force)`);
    stop.abort();
    await Promise.allSettled([app.close(), worker.stopped, dispatcher.stopped, docs?.close()]);
    await engines.registry.close().catch(() => {});
    await workerPool.end();
    await apiDb.close();
    log('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
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
  const owners = await pool.query('SELECT 1 FROM owners LIMIT 1');
  if (owners.rowCount && owners.rowCount > 0) return null;
  const created = await createOwner(pool, { name: 'default', plan: 'UNLIMITED' });
  return { key: created.apiKey, created: true };
}

function printBanner(
  apiUrl: string,
  key: { key: string; created: boolean } | null,
  docsUrl: string | null,
  engines: { name: string; pipelines: string[] }[],
): void {
  const lines = [
    '',
    `imagegen API ready: ${apiUrl}   (OpenAPI: ${apiUrl}/openapi.json, health: ${apiUrl}/health)`,
    docsUrl ? `Documentation: ${docsUrl}` : 'Documentation: not served (build it with npm run build:docs)',
    `Engines: ${engines.map((e) => `${e.name} (${e.pipelines.length} pipelines)`).join(', ') || 'none'}`,
  ];
  if (key) {
    const shown = key.created ? 'Your API key (shown once, keep it):' : 'API key (IMAGEGEN_API_KEY):';
    const body = JSON.stringify({
      prompt: 'a lighthouse at dawn, watercolour',
      negative_prompt: 'blurry',
      samples: 1,
    });
    lines.push(
      `${shown} ${key.key}`,
      'Try it (submit, then poll the id it answers):',
      `  curl -s -X POST ${apiUrl}/sd/text2image/v1 -H 'API-Key: ${key.key}' -H 'Content-Type: application/json' -d '${body}'`,
      `  curl -s ${apiUrl}/sd/text2image/v1/status/<id> -H 'API-Key: ${key.key}'`,
    );
  } else {
    lines.push(
      'API keys: existing keys work; make another with  npm run --silent cli -- keys create --owner <owner-id>',
    );
  }
  console.log(`${lines.join('\n')}\n`);
}

main().catch((error) => {
  console.error(`[imagegen] start failed: ${(error as Error).stack ?? error}`);
  process.exit(1);
});
