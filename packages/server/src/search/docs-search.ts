/**
 * The search service as the docs host mounts it on the embedded default (`npm start`): records
 * from the built site's search-index.json (written by every docs build), reloaded when a build
 * rewrites it; insights stored in the product's PostgreSQL; credentials from SEARCH_APP_ID,
 * SEARCH_API_KEY and SEARCH_INDEX.
 *
 *   const search = await startDocsSearch({ buildDir, pool, env: process.env, log });
 *   startDocsHost({ port, buildDir, handlers: [search.handle] });   // ... search.close() on stop
 */
import { existsSync, unwatchFile, watchFile } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { Queryable } from '../db/pool.ts';
import { loadSearchIndexFile, searchSettingsFromEnv } from './index.ts';
import { indexBuiltSite } from './indexer.ts';
import { createInsightsStore } from './insights.ts';
import { createSearchService, type SearchService } from './search-service.ts';

export interface DocsSearchOptions {
  /** The built docs site (packages/docs/build). */
  buildDir: string;
  /** Where insights events are stored; without it /1/events answers 503. */
  pool?: Queryable;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface DocsSearch {
  /** The docs host's handler: true when the request was the search service's. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  readonly service: SearchService;
  close(): void;
}

export async function startDocsSearch(options: DocsSearchOptions): Promise<DocsSearch> {
  const log = options.log ?? (() => {});
  const file = path.join(options.buildDir, 'search-index.json');
  const load = async () => {
    if (existsSync(file)) return (await loadSearchIndexFile(file)).records;
    // A build from before the indexer ran: index it now (a second or two).
    log(`${file} is missing: indexing the built site in memory`);
    return (await indexBuiltSite({ buildDir: options.buildDir })).records;
  };
  const service = createSearchService({
    records: await load(),
    ...searchSettingsFromEnv(options.env ?? process.env),
    ...(options.pool ? { insights: createInsightsStore(options.pool) } : {}),
  });
  log(`search: ${service.index.records.length} records`);
  // A docs build rewrites the file; the running service takes the new records.
  watchFile(file, { interval: 2000 }, (current, previous) => {
    if (current.mtimeMs === previous.mtimeMs || current.size === 0) return;
    loadSearchIndexFile(file).then(
      (next) => {
        service.replaceRecords(next.records);
        log(`search: reloaded ${next.records.length} records after a docs build`);
      },
      (error: Error) =>
        log(`search: kept the previous records, the new index did not load: ${error.message}`),
    );
  });
  return {
    service,
    handle: (req, res) => service.handle(req, res),
    close: () => unwatchFile(file),
  };
}
