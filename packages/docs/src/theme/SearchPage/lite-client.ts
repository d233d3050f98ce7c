/**
 * Stands in for `algoliasearch/lite` in the theme's /search page (a bundler alias in
 * docusaurus.config.ts, for that page's imports only): the page calls `liteClient(appId, apiKey)`
 * with no hosts, which would query algolia.net; this one queries our search service, with the
 * same hosts and timeouts as the modal. The page passes the build's credentials and asks for the
 * build's index; this run's settings (src/client/runtime-settings.ts) replace both.
 */
import { builtRuntimeSettings, runtimeSettings } from '../../client/runtime-settings.ts';
import { createSearchClient, type LiteClient, parseHosts } from '../SearchBar/search-client.ts';

type SearchParams = Parameters<LiteClient['search']>[0];

export function liteClient(_appId: string, _apiKey: string): LiteClient {
  const { search } = runtimeSettings();
  const origin = typeof window === 'undefined' ? 'http://localhost' : window.location.origin;
  const client = createSearchClient(search.appId, search.apiKey, parseHosts(search.hosts, origin));
  const builtIndex = builtRuntimeSettings().search.indexName;
  if (search.indexName === builtIndex) return client;
  const searchAsAsked = client.search.bind(client);
  return Object.assign(client, {
    search: ((params: SearchParams, options?: Parameters<LiteClient['search']>[1]) =>
      searchAsAsked(renameIndex(params, builtIndex, search.indexName), options)) as LiteClient['search'],
  });
}

/** The same requests, those for index `from` sent to index `to` (the helper sends an array). */
function renameIndex(params: SearchParams, from: string, to: string): SearchParams {
  const rename = <R>(request: R): R =>
    (request as { indexName?: string }).indexName === from ? { ...request, indexName: to } : request;
  if (Array.isArray(params)) return params.map(rename) as SearchParams;
  return { ...params, requests: params.requests.map(rename) } as SearchParams;
}
