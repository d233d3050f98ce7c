/**
 * Stands in for `algoliasearch/lite` in the theme's /search page (a bundler alias in
 * docusaurus.config.ts, for that page's imports only): the page calls `liteClient(appId, apiKey)`
 * with no hosts, which would query algolia.net; this one queries our search service, with the
 * same hosts and timeouts as the modal.
 */
import siteConfig from '@generated/docusaurus.config';
import { createSearchClient, parseHosts } from '../SearchBar/search-client.ts';

export function liteClient(appId: string, apiKey: string) {
  const { hosts } = (siteConfig.themeConfig as { algolia?: { hosts?: string[] } }).algolia ?? {};
  const origin = typeof window === 'undefined' ? 'http://localhost' : window.location.origin;
  return createSearchClient(appId, apiKey, parseHosts(hosts, origin));
}
