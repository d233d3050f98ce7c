/**
 * The settings a page needs that depend on where the site runs, not on what it says: the API
 * address (/schema reads its openapi.json, code samples show it, page views go to it) and the
 * search service's credentials, index and hosts, and the navbar's sign-up address.
 *
 * The build bakes in the values of its own environment (docusaurus.config.ts); they are the
 * fallback for a site served by any static host. The docs host (host/docs-host.ts) writes the
 * values of the environment it runs in into every page it serves, as a small inline script that
 * runs before the site's own scripts, so a site built once works when started with another
 * API_PORT, PUBLIC_URL, SEARCH_* or IMAGEGEN_DOCS_SIGNUP_URL without a rebuild, and costs no extra request. Pages read the
 * settings once per page load; client-side navigation keeps them.
 */
import type { SearchSettings } from '@imagegen/search/settings';

export interface RuntimeSettings {
  /** The API's public address, without a trailing slash. */
  apiUrl: string;
  /** Where the navbar's Sign-up link goes: a site path or a full URL (IMAGEGEN_DOCS_SIGNUP_URL). */
  signUpUrl: string;
  search: SearchSettings;
}

/** The global the docs host's script sets. */
export const RUNTIME_SETTINGS_GLOBAL = '__IMAGEGEN_RUNTIME_SETTINGS__';

/** The inline script that hands the settings to the page. */
export function runtimeSettingsScript(settings: RuntimeSettings): string {
  // '<' escaped so that no value can close the script element.
  const json = JSON.stringify(settings).replace(/</g, '\\u003c');
  return `<script>window.${RUNTIME_SETTINGS_GLOBAL}=${json}</script>`;
}

/** The settings the docs host served with this page, over the build's; the build's alone elsewhere. */
export function servedRuntimeSettings(built: RuntimeSettings): RuntimeSettings {
  const served =
    typeof window === 'undefined'
      ? undefined
      : ((window as unknown as Record<string, unknown>)[RUNTIME_SETTINGS_GLOBAL] as
          | Partial<RuntimeSettings>
          | undefined);
  if (!served) return built;
  return {
    apiUrl: served.apiUrl || built.apiUrl,
    signUpUrl: served.signUpUrl || built.signUpUrl,
    search: { ...built.search, ...served.search },
  };
}
