/**
 * The documentation site as `npm start` serves it on DOCS_PORT: the built site, its search
 * service on the same port, and this run's settings (API address, sign-up address, search
 * credentials, index and hosts) written into every page, so that a site built once follows the environment it runs in.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Queryable } from '@imagegen/db';
import { type SearchSettings, searchSettingsFromEnv, startDocsSearch } from '@imagegen/search';
import { siteLinks } from '../site-links.ts';
import { type DocsHost, type DocsHostHandler, startDocsHost } from './docs-host.ts';

const HOST_DIR = path.dirname(fileURLToPath(import.meta.url));

/**
 * The Docusaurus build of this package, `build/` at its root: beside `host/` in the sources, two
 * folders up from the production build's `dist/host/`.
 */
export const DOCS_BUILD_DIR = path.resolve(
  HOST_DIR,
  path.basename(path.dirname(HOST_DIR)) === 'dist' ? '../..' : '..',
  'build',
);

export function docsBuilt(buildDir = DOCS_BUILD_DIR): boolean {
  return existsSync(path.join(buildDir, '404.html'));
}

export interface DocsSiteOptions {
  port: number;
  host: string;
  buildDir?: string;
  /** The API's public address (PUBLIC_URL): where /schema reads openapi.json and page views go. */
  apiUrl: string;
  /** The navbar's Sign-up address; by default IMAGEGEN_DOCS_SIGNUP_URL, else the build's default. */
  signUpUrl?: string;
  /** The search credentials, index and hosts; by default from SEARCH_* in the environment. */
  search?: SearchSettings;
  /** Where the search service stores insights events. */
  pool?: Queryable;
  log?: (line: string) => void;
  /** More handlers in front of the site (the server's /metrics), tried after the search service. */
  handlers?: DocsHostHandler[];
}

/** Serves the built documentation site (and, on the same port, its search service). */
export async function startDocsSite(options: DocsSiteOptions): Promise<DocsHost> {
  const buildDir = options.buildDir ?? DOCS_BUILD_DIR;
  const settings = options.search ?? searchSettingsFromEnv(process.env);
  const search = await startDocsSearch({
    buildDir,
    settings,
    ...(options.pool ? { pool: options.pool } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  try {
    const host = await startDocsHost({
      port: options.port,
      host: options.host,
      buildDir,
      handlers: [search.handle, ...(options.handlers ?? [])],
      runtimeSettings: {
        apiUrl: options.apiUrl.replace(/\/+$/, ''),
        signUpUrl: options.signUpUrl ?? siteLinks(process.env).signUp,
        search: settings,
      },
    });
    return {
      url: host.url,
      async close() {
        search.close();
        await host.close();
      },
    };
  } catch (error) {
    search.close();
    throw error;
  }
}
