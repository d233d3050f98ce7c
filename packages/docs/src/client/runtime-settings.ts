/**
 * The browser side of ../../runtime-settings.ts: this page's API address and search settings,
 * as the docs host served them with the page, or else as the build wrote them.
 */
import useIsBrowser from '@docusaurus/useIsBrowser';
import siteConfig from '@generated/docusaurus.config';
import type { SearchSettings } from '@imagegen/search/settings';
import { type RuntimeSettings, servedRuntimeSettings } from '../../runtime-settings.ts';
import type { SiteLinks } from '../../site-links.ts';

const search = siteConfig.themeConfig.algolia as SearchSettings;
const links = siteConfig.customFields?.links as SiteLinks;
const built: RuntimeSettings = {
  apiUrl: links.apiUrl,
  signUpUrl: links.signUp,
  search: { appId: search.appId, apiKey: search.apiKey, indexName: search.indexName, hosts: search.hosts },
};
let served: RuntimeSettings | undefined;

/** The settings to use now (read once per page load: they do not change while it lives). */
export function runtimeSettings(): RuntimeSettings {
  if (typeof window === 'undefined') return built;
  served ??= servedRuntimeSettings(built);
  return served;
}

/** The build's settings, whatever the host served. */
export function builtRuntimeSettings(): RuntimeSettings {
  return built;
}

/**
 * For components: the build's settings while the server-rendered HTML hydrates, so that both
 * render the same, then the served ones.
 */
export function useRuntimeSettings(): RuntimeSettings {
  return useIsBrowser() ? runtimeSettings() : built;
}
