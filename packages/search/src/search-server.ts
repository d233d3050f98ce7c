/**
 * The search service on its own port, without the docs host: a node:http server with the query,
 * single-query and events paths, for a deployment that serves the built site from a CDN. The
 * records come from an index file (build-index.ts writes it; the docs build does so every time),
 * reloaded on demand. standalone.ts runs it from the command line.
 *
 * Insights need the search_events table in PostgreSQL. The product's migrations create it, and
 * the API applies them when it starts, so this server only checks that the table is there and
 * refuses to start, saying what to do, when it is not: the migrations belong to the API, and
 * creating the table here would give the database a table its migration history does not know.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPool, type Pool, runMigrations } from '@imagegen/db';
import { loadSearchIndexFile } from './index-file.ts';
import { createInsightsStore } from './insights.ts';
import { SEARCH_MIGRATIONS } from './migrations.ts';
import { createSearchService, type SearchService } from './search-service.ts';
import type { SearchSettings } from './search-settings.ts';

export interface SearchServerOptions {
  /** The index file (packages/docs/build/search-index.json). */
  indexFile: string;
  /** 0 picks a free port. */
  port: number;
  host?: string;
  settings: Pick<SearchSettings, 'appId' | 'apiKey' | 'indexName'>;
  /** Where insights events are stored; without it /1/events answers 503. */
  databaseUrl?: string;
}

export interface SearchServer {
  url: string;
  service: SearchService;
  /** Reads the index file again (after a docs rebuild); answers the number of records. */
  reload(): Promise<number>;
  close(): Promise<void>;
}

export async function startSearchServer(options: SearchServerOptions): Promise<SearchServer> {
  const file = await loadSearchIndexFile(options.indexFile);
  const pool = options.databaseUrl ? await openInsightsPool(options.databaseUrl) : undefined;
  const service = createSearchService({
    records: file.records,
    ...options.settings,
    ...(pool ? { insights: createInsightsStore(pool) } : {}),
  });
  const server = createServer((req, res) => {
    if (service.handle(req, res)) return;
    req.resume();
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not found","status":404}');
  });
  const host = options.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, host, () => resolve());
    });
  } catch (error) {
    await pool?.end();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    service,
    async reload() {
      const next = await loadSearchIndexFile(options.indexFile);
      service.replaceRecords(next.records);
      return next.records.length;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await pool?.end();
    },
  };
}

/**
 * The insights database: its table is created by this package's own migrations, which the
 * product's migration run also applies, so the service can start on an empty database as well as
 * on the product's.
 */
async function openInsightsPool(url: string): Promise<Pool> {
  const pool = createPool(url, { max: 4, applicationName: 'imagegen-search' });
  try {
    await runMigrations(pool, [SEARCH_MIGRATIONS]);
    return pool;
  } catch (error) {
    await pool.end();
    throw new Error(`the insights database at DATABASE_URL is not usable: ${(error as Error).message}`);
  }
}
