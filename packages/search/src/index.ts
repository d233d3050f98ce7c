/**
 * @imagegen/search: the documentation search. The index builder reads the built docs site into
 * DocSearch records; the search service answers Algolia's query and insights API over them, as a
 * node:http handler that the docs host mounts (startDocsSearch) or that runs alone (standalone.ts).
 */
export { AlgoliaError } from './algolia-error.ts';
export { type DocsSearch, type DocsSearchOptions, startDocsSearch } from './docs-search.ts';
export { loadSearchIndexFile, recordsOfBuild, searchIndexFileOf } from './index-file.ts';
export { indexBuiltSite, recordsOfPage } from './indexer.ts';
export { createInsightsStore, type InsightsStore } from './insights.ts';
export { SEARCH_MIGRATIONS } from './migrations.ts';
export type { DocSearchRecord, SearchIndexFile } from './records.ts';
export { parseSearchRequest } from './search-request.ts';
export { createSearchService, type SearchService, type SearchServiceOptions } from './search-service.ts';
export { SEARCH_DEFAULTS, type SearchSettings, searchSettingsFromEnv } from './search-settings.ts';
export { listSearchEvents, type StoredSearchEvent } from './sql/listSearchEvents.ts';
