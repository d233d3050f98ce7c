import type { IncomingMessage, ServerResponse } from 'node:http';
import { type DocsHost, startDocsHost } from '@imagegen/docs/host';
import {
  createInsightsStore,
  createSearchService,
  type DocSearchRecord,
  recordsOfBuild,
  SEARCH_DEFAULTS,
  type SearchService,
} from '@imagegen/search';
import { createTestDatabase, type TestDatabase } from '@imagegen/server/testing';
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { DESKTOP } from '../support/chromium.ts';
import { BUILD_DIR } from '../support/docs-site.ts';

/** The built site under test: packages/docs/build, or IMAGEGEN_DOCS_BUILD_DIR. */
export const SITE_DIR = process.env.IMAGEGEN_DOCS_BUILD_DIR ?? BUILD_DIR;

/** How the search paths answer: normally, 500, a dropped connection (service gone), or late. */
/**
 * What the search service does to the next requests: answer (`none`), fail with a 500, drop the
 * connection, or `hold`: answer only once the promise settles, so a test decides when the answer
 * comes (with the page's clock stopped, the client's timeouts wait for it too).
 */
export type Fault = 'none' | 'error-500' | 'down' | { hold: Promise<void> };

export interface SearchSite {
  docs: DocsHost;
  service: SearchService;
  db: TestDatabase;
  records: DocSearchRecord[];
  fault: Fault;
  /** Search requests the host received (method and path), in order. */
  searchRequests: string[];
  newContext(browser: Browser, options?: BrowserContextOptions): Promise<BrowserContext>;
  close(): Promise<void>;
}

/**
 * The built docs on the product's docs host with the search service mounted on the same port,
 * as `npm start` serves them, insights stored in a fresh PostgreSQL database. Every browser
 * request that leaves loopback is recorded in `outside` by the context, and aborted.
 */
export async function startSearchSite(): Promise<SearchSite & { outside: string[] }> {
  const records = await recordsOfBuild(SITE_DIR);
  const db = await createTestDatabase();
  const service = createSearchService({
    records,
    ...SEARCH_DEFAULTS,
    insights: createInsightsStore(db.pool),
  });
  const outside: string[] = [];
  const site = {
    fault: 'none' as Fault,
    searchRequests: [] as string[],
  };
  const handler = (req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> => {
    if (!(req.url ?? '').startsWith('/1/')) return false;
    site.searchRequests.push(`${req.method} ${req.url?.split('?')[0]}`);
    const fault = site.fault;
    if (fault === 'down') {
      req.socket.destroy();
      return true;
    }
    if (fault === 'error-500') {
      res.writeHead(500, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
      res.end('{"message":"Internal error","status":500}');
      return true;
    }
    if (typeof fault === 'object') return fault.hold.then(() => service.handle(req, res));
    return service.handle(req, res);
  };
  const docs = await startDocsHost({ port: 0, buildDir: SITE_DIR, handlers: [handler] });
  return Object.assign(site, {
    docs,
    service,
    db,
    records,
    outside,
    async newContext(browser: Browser, options: BrowserContextOptions = {}) {
      const context = await browser.newContext({ ...DESKTOP, ...options });
      await context.route(
        (url) => url.hostname !== '127.0.0.1' && url.hostname !== 'localhost',
        async (route) => {
          outside.push(route.request().url());
          await route.abort();
        },
      );
      return context;
    },
    async close() {
      await docs.close();
      await db.drop();
    },
  });
}
