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
import pg from 'pg';
import { loadSearchIndexFile } from './index-file.ts';
import { createInsightsStore } from './insights.ts';
import { createSearchService, type SearchService } from './search-service.ts';
import type { SearchSettings } from './search-settings.ts';
import { searchEventsTableExists } from './sql/searchEventsTableExists.ts';

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

async function openInsightsPool(url: string): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: url, max: 4, application_name: 'imagegen-search' });
  // An idle connection that drops (a database restart) is replaced; without a listener it would crash.
  pool.on('error', () => {});
  try {
    if (!(await searchEventsTableExists(pool))) {
      throw new Error(
        'the database at DATABASE_URL has no search_events table. Apply the product migrations to it ' +
          'first (the API applies them when it starts: DATABASE_URL=... npm start), or leave ' +
          'DATABASE_URL unset to serve searches without insights.',
      );
    }
    return pool;
  } catch (error) {
    await pool.end();
    throw error;
  }
}
