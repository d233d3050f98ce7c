/**
 * The search-only credentials, the index name and the hosts that the docs site's search client
 * and the search service share, with their defaults. The docs build bakes them into the site as a
 * fallback, the docs host serves them to the pages at run time, and the service checks requests
 * against them, so all three read them here, from the same environment variables.
 *
 * This module has no dependencies, so that the Docusaurus config can load it cheaply.
 */
export interface SearchSettings {
  /** SEARCH_APP_ID */
  appId: string;
  /** SEARCH_API_KEY: the search-only key the site ships with. */
  apiKey: string;
  /** SEARCH_INDEX */
  indexName: string;
  /**
   * SEARCH_HOSTS, comma-separated: where the site's client sends searches, tried in order. 'self'
   * is the docs page's own origin, where the docs host mounts the service.
   */
  hosts: string[];
}

export const SEARCH_DEFAULTS: Readonly<SearchSettings> = Object.freeze({
  appId: 'imagegen',
  apiKey: 'search-only-key',
  indexName: 'docs',
  hosts: ['self'],
});

/** The settings from SEARCH_APP_ID, SEARCH_API_KEY, SEARCH_INDEX and SEARCH_HOSTS; unset or empty is the default. */
export function searchSettingsFromEnv(env: Record<string, string | undefined>): SearchSettings {
  const hosts = (env.SEARCH_HOSTS ?? '')
    .split(',')
    .map((host) => host.trim())
    .filter(Boolean);
  return {
    appId: env.SEARCH_APP_ID || SEARCH_DEFAULTS.appId,
    apiKey: env.SEARCH_API_KEY || SEARCH_DEFAULTS.apiKey,
    indexName: env.SEARCH_INDEX || SEARCH_DEFAULTS.indexName,
    hosts: hosts.length > 0 ? hosts : [...SEARCH_DEFAULTS.hosts],
  };
}
