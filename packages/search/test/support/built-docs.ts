import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { indexBuiltSite } from '../../src/indexer.ts';
import type { DocSearchRecord } from '../../src/records.ts';
import { createSearchService, type SearchServiceOptions } from '../../src/search-service.ts';
import { SEARCH_DEFAULTS } from '../../src/search-settings.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/** The built docs site (`npm test` builds it first); IMAGEGEN_DOCS_BUILD_DIR points elsewhere. */
export function builtDocsDir(): string {
  const dir = process.env.IMAGEGEN_DOCS_BUILD_DIR ?? path.join(REPO, 'packages/docs/build');
  if (!existsSync(path.join(dir, 'index.html'))) {
    throw new Error(`${dir} holds no built site: run npm run build -w packages/docs first`);
  }
  return dir;
}

let cached: Promise<DocSearchRecord[]> | undefined;
/** Records of the real built docs, indexed once per test file. */
export function builtDocsRecords(): Promise<DocSearchRecord[]> {
  cached ??= indexBuiltSite({ buildDir: builtDocsDir(), siteUrl: 'http://localhost:3000' }).then(
    (f) => f.records,
  );
  return cached;
}

export const CREDENTIALS = {
  appId: SEARCH_DEFAULTS.appId,
  apiKey: SEARCH_DEFAULTS.apiKey,
  indexName: SEARCH_DEFAULTS.indexName,
};

export interface RunningService {
  url: string;
  /** POSTs JSON (or raw text) to a path, credentials in query parameters unless given. */
  post(
    pathAndQuery: string,
    body: unknown,
    init?: { headers?: Record<string, string>; auth?: boolean },
  ): Promise<Response>;
  close(): Promise<void>;
}

export async function startService(
  options: Partial<SearchServiceOptions> & { records: DocSearchRecord[] },
): Promise<RunningService> {
  const service = createSearchService({ ...CREDENTIALS, ...options });
  const server: Server = createServer((req, res) => {
    if (!service.handle(req, res)) res.writeHead(404).end('not ours');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    post(pathAndQuery, body, init = {}) {
      const target = new URL(pathAndQuery, url);
      if (init.auth !== false && !target.searchParams.has('x-algolia-api-key')) {
        target.searchParams.set('x-algolia-application-id', CREDENTIALS.appId);
        target.searchParams.set('x-algolia-api-key', CREDENTIALS.apiKey);
      }
      return fetch(target, {
        method: 'POST',
        // The browser client sends text/plain so that no preflight is needed.
        headers: { 'content-type': 'text/plain', ...init.headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The request body DocSearch's modal sends (DocSearchModal's buildQuerySources). */
export function docSearchRequest(query: string, extra: Record<string, unknown> = {}) {
  return {
    requests: [
      {
        query,
        indexName: 'docs',
        attributesToRetrieve: [
          'hierarchy.lvl0',
          'hierarchy.lvl1',
          'hierarchy.lvl2',
          'hierarchy.lvl3',
          'hierarchy.lvl4',
          'hierarchy.lvl5',
          'hierarchy.lvl6',
          'content',
          'type',
          'url',
        ],
        attributesToSnippet: [
          'hierarchy.lvl1:10',
          'hierarchy.lvl2:10',
          'hierarchy.lvl3:10',
          'hierarchy.lvl4:10',
          'hierarchy.lvl5:10',
          'hierarchy.lvl6:10',
          'content:10',
        ],
        snippetEllipsisText: '…',
        highlightPreTag: '<mark>',
        highlightPostTag: '</mark>',
        hitsPerPage: 20,
        clickAnalytics: true,
        facetFilters: ['language:en', ['docusaurus_tag:default', 'docusaurus_tag:docs-default-current']],
        ...extra,
      },
    ],
  };
}
