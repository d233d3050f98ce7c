/**
 * The search service as the docs host mounts it on the embedded default (`npm start`): records
 * from the built site's search-index.json (written by every docs build), reloaded when a build
 * rewrites it; insights stored in the product's PostgreSQL; credentials and index name from the
 * search settings (SEARCH_APP_ID, SEARCH_API_KEY, SEARCH_INDEX).
 *
 *   const search = await startDocsSearch({ buildDir, pool, settings, log });
 *   startDocsHost({ port, buildDir, handlers: [search.handle] });   // ... search.close() on stop
 */
import { unwatchFile, watchFile } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Queryable } from '@imagegen/db';
import { loadSearchIndexFile, recordsOfBuild, searchIndexFileOf } from './index-file.ts';
import { createInsightsStore } from './insights.ts';
import { createSearchService, type SearchService } from './search-service.ts';
import { type SearchSettings, searchSettingsFromEnv } from './search-settings.ts';

export interface DocsSearchOptions {
  /** The built docs site (packages/docs/build). */
  buildDir: string;
  /** Where insights events are stored; without it /1/events answers 503. */
  pool?: Queryable;
  /** The credentials and index name requests must use; by default from the process environment. */
  settings?: Pick<SearchSettings, 'appId' | 'apiKey' | 'indexName'>;
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
  const file = searchIndexFileOf(options.buildDir);
  const service = createSearchService({
    records: await recordsOfBuild(options.buildDir, log),
    ...(options.settings ?? searchSettingsFromEnv(process.env)),
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
