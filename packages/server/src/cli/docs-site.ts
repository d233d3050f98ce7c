import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DocsHost, startDocsHost } from '../docs-host/docs-host.ts';

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
}

/** Serves the built documentation site (and, on the same port, its search service). */
export async function startDocsSite(options: DocsSiteOptions): Promise<DocsHost> {
  return startDocsHost({
    port: options.port,
    host: options.host,
    buildDir: options.buildDir ?? DOCS_BUILD_DIR,
  });
}
