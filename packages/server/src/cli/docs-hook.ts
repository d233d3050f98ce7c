import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from '../db/pool.ts';

/**
 * The hook for the documentation host. When packages/server/src/docs-host/index.ts exists, `npm
 * start` imports it and calls `startDocsHost(options)`, which serves the built docs site and its
 * search service (`POST /1/indexes/{index}/queries`) on DOCS_PORT. Without it, nothing is served there.
 */
export interface DocsHostOptions {
  port: number;
  host: string;
  /** The API's public base URL (the site's /schema page reads `${apiUrl}/openapi.json`). */
  apiUrl: string;
  pool: Pool;
  dataDir: string;
  /** Aborted on shutdown. */
  signal: AbortSignal;
  log: (line: string) => void;
}

export interface DocsHost {
  readonly url: string;
  stop(): Promise<void>;
}

const DOCS_HOST_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs-host');

export async function startDocsHostIfPresent(options: DocsHostOptions): Promise<DocsHost | null> {
  if (!existsSync(path.join(DOCS_HOST_DIR, 'index.ts'))) return null;
  const module = (await import(path.join(DOCS_HOST_DIR, 'index.ts'))) as {
    startDocsHost?: (options: DocsHostOptions) => Promise<DocsHost>;
  };
  if (typeof module.startDocsHost !== 'function') {
    throw new Error('packages/server/src/docs-host/index.ts does not export startDocsHost(options)');
  }
  return module.startDocsHost(options);
}
