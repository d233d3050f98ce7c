import { existsSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApi } from '@imagegen/contract';
import { DOCS_BUILD_DIR, type DocsHost, startDocsHost } from '@imagegen/docs/host';
import { siteLinks } from '@imagegen/docs/site-links';
import { analyticsRoutes } from '@imagegen/server';
import { createTestDatabase, type TestDatabase } from '@imagegen/server/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { DESKTOP } from './chromium.ts';

export const BUILD_DIR = DOCS_BUILD_DIR;

export interface DocsSite {
  /** The built site, served by the product's docs host on a free loopback port. */
  docs: DocsHost;
  /** Stands in for the API host the build points at: openapi.json and the analytics collector. */
  api: { url: string; app: FastifyInstance };
  db: TestDatabase;
  /** A browser context whose requests to the configured API URL reach `api`. */
  newContext(browser: Browser, options?: BrowserContextOptions): Promise<BrowserContext>;
  close(): Promise<void>;
}

/**
 * Starts what the site needs: the docs host over packages/docs/build (built by `npm test` before
 * Vitest), and a loopback API with the contract's real OpenAPI document and the real analytics
 * plugin storing into a fresh PostgreSQL database. The build bakes in the API URL of its
 * configuration (http://localhost:8000 by default), which tests must not use, so each browser
 * context forwards those requests to the loopback API.
 */
export async function startDocsSite(): Promise<DocsSite> {
  if (!existsSync(path.join(BUILD_DIR, '404.html'))) {
    throw new Error(`No built site in ${BUILD_DIR}: run \`npm run build:docs\` (npm test does) first`);
  }
  const docs = await startDocsHost({ port: 0, buildDir: BUILD_DIR });
  const db = await createTestDatabase();
  const app = Fastify();
  const openapi = JSON.stringify(buildOpenApi());
  app.get('/openapi.json', async (_request, reply) =>
    reply.header('Access-Control-Allow-Origin', '*').type('application/json').send(openapi),
  );
  await app.register(analyticsRoutes, { pool: db.pool, allowedOrigins: [docs.url] });
  const apiUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const configured = siteLinks().apiUrl;

  return {
    docs,
    api: { url: apiUrl, app },
    db,
    async newContext(browser, options = {}) {
      const context = await browser.newContext({ ...DESKTOP, ...options });
      await context.route(`${configured}/**`, async (route) => {
        const target = route.request().url().replace(configured, apiUrl);
        try {
          const response = await route.fetch({ url: target });
          await route.fulfill({ response });
        } catch (error) {
          // A page that navigates or closes while its request (often a page view) is being proxied
          // disposes of that request; nobody waits for it any more. Anything else is a real failure.
          if (!/disposed|has been closed/.test(String(error))) throw error;
        }
      });
      return context;
    },
    async close() {
      await app.close();
      await docs.close();
      await db.drop();
    },
  };
}
