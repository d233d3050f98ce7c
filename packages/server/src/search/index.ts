import { readFile } from 'node:fs/promises';
import type { SearchIndexFile } from './records.ts';

export { createInsightsStore, type InsightsStore } from './insights.ts';
export type { DocSearchRecord, SearchIndexFile } from './records.ts';
export { createSearchService, type SearchService, type SearchServiceOptions } from './search-service.ts';
export { listSearchEvents } from './sql/listSearchEvents.ts';

/** The search-only credentials and index the site and the service share (DESIGN handles). */
export function searchSettingsFromEnv(env: NodeJS.ProcessEnv): {
  appId: string;
  apiKey: string;
  indexName: string;
} {
  return {
    appId: env.SEARCH_APP_ID || 'imagegen',
    apiKey: env.SEARCH_API_KEY || 'search-only-key',
    indexName: env.SEARCH_INDEX || 'docs',
  };
}

/** Reads the index file the docs build writes (packages/docs/build/search-index.json). */
export async function loadSearchIndexFile(file: string): Promise<SearchIndexFile> {
  const parsed = JSON.parse(await readFile(file, 'utf8')) as SearchIndexFile;
  if (parsed.version !== 1 || !Array.isArray(parsed.records)) {
    throw new Error(`${file} is not a search index (version 1) written by the search indexer`);
  }
  return parsed;
}
