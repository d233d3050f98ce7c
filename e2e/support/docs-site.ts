import { existsSync } from 'node:fs';
import path from 'node:path';
import { DOCS_BUILD_DIR, type DocsHost, startDocsSite as startDocsRole } from '@imagegen/docs/host';
import { createEngineRegistry } from '@imagegen/engines';
import { metricsFromEnv, metricsHandler } from '@imagegen/server';
import { createTestDatabase, freePort, startLoopbackApi, type TestDatabase } from '@imagegen/server/testing';
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { DESKTOP } from './chromium.ts';

export const BUILD_DIR = DOCS_BUILD_DIR;

export interface DocsSite {
  /** The built site with its search service, as `npm start`'s docs role serves it. */
  docs: DocsHost;
  /** The API the pages read (openapi.json) and post page views to, as `npm start` builds it. */
  api: { url: string };
  db: TestDatabase;
  /** A browser context in the test's window size. */
  newContext(browser: Browser, options?: BrowserContextOptions): Promise<BrowserContext>;
  close(): Promise<void>;
}

/**
 * Starts what the site needs as `npm start` runs it: the docs role (the built site with its
 * search service and /metrics, told this run's API address, as start.ts starts it) over
 * packages/docs/build (built by `npm test` before Vitest), and the API role on loopback, built
 * by the same builder as the program's with the docs port in its settings, so it takes the
 * site's page views (the analytics collector) exactly as it does there, into a fresh database.
 */
export async function startDocsSite(): Promise<DocsSite> {
  if (!existsSync(path.join(BUILD_DIR, '404.html'))) {
    throw new Error(`No built site in ${BUILD_DIR}: run \`npm run build:docs\` (npm test does) first`);
  }
  const db = await createTestDatabase();
  const docsPort = await freePort();
  const api = await startLoopbackApi({
    pool: db.pool,
    engines: createEngineRegistry([], { enabled: [], pinned: {} }),
    withWorker: false,
    env: { DOCS_PORT: String(docsPort) },
  });
  const docs = await startDocsRole({
    port: docsPort,
    host: '127.0.0.1',
    apiUrl: api.url,
    pool: db.pool,
    handlers: [metricsHandler(metricsFromEnv({}))],
  });

  return {
    docs,
    api: { url: api.url },
    db,
    newContext: (browser, options = {}) => browser.newContext({ ...DESKTOP, ...options }),
    async close() {
      await docs.close();
      await api.close();
      await db.drop();
    },
  };
}
