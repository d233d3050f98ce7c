import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Queryable } from '../db/pool.ts';
import { type DocsHost, startDocsHost } from '../docs-host/docs-host.ts';
import { startDocsSearch } from '../search/docs-search.ts';

/** The Docusaurus build of packages/docs, which `npm start` serves on DOCS_PORT. */
export const DOCS_BUILD_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'docs',
  'build',
);

export function docsBuilt(buildDir = DOCS_BUILD_DIR): boolean {
  return existsSync(path.join(buildDir, '404.html'));
}

export interface DocsSiteOptions {
  port: number;
  host: string;
  buildDir?: string;
  /** Where the search service stores insights events. */
  pool?: Queryable;
  log?: (line: string) => void;
}

/** Serves the built documentation site (and, on the same port, its search service). */
export async function startDocsSite(options: DocsSiteOptions): Promise<DocsHost> {
  const buildDir = options.buildDir ?? DOCS_BUILD_DIR;
  const search = await startDocsSearch({
    buildDir,
    ...(options.pool ? { pool: options.pool } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  try {
    const host = await startDocsHost({
      port: options.port,
      host: options.host,
      buildDir,
      handlers: [search.handle],
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
