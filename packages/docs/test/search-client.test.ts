import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSearchService, indexBuiltSite, SEARCH_DEFAULTS } from '@imagegen/search';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_BUILD_DIR } from '../host/index.ts';
import {
  createHostsCache,
  createSearchClient,
  parseHosts,
  SEARCH_TIMEOUTS,
  type SearchHost,
} from '../src/theme/SearchBar/search-client.ts';

/**
 * The site's search client (algoliasearch 5's lite client with our hosts and timeouts) against
 * real servers on loopback: one healthy search service and hosts that fail in each way.
 */
interface Listening {
  server: Server;
  host: SearchHost;
  requests: number;
}

async function listen(
  handler: (server: Listening) => Parameters<typeof createServer>[1],
): Promise<Listening> {
  const state = { requests: 0 } as Listening;
  state.server = createServer((req, res) => {
    state.requests++;
    handler(state)!(req, res);
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  const { port } = state.server.address() as AddressInfo;
  state.host = parseHosts([`http://127.0.0.1:${port}`], 'http://unused')[0]!;
  return state;
}

const request = (query: string) => ({
  requests: [{ indexName: SEARCH_DEFAULTS.indexName, query, hitsPerPage: 3 }],
});

describe('search client hosts', () => {
  let healthy: Listening;
  let silent: Listening;
  let stalling: Listening;
  let failing: Listening;
  let refusedHost: SearchHost;

  beforeAll(async () => {
    const { records } = await indexBuiltSite({ buildDir: DOCS_BUILD_DIR });
    const service = createSearchService({ records, ...SEARCH_DEFAULTS });
    healthy = await listen(() => (req, res) => {
      service.handle(req, res);
    });
    // Accepts the connection, never answers: the read timeout applies.
    silent = await listen(() => () => {});
    // Starts its answer, never finishes it: the read timeout applies.
    stalling = await listen(() => (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"results":');
    });
    failing = await listen(() => (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"down","status":503}');
    });
    const closed = await listen(() => () => {});
    refusedHost = closed.host;
    await new Promise<void>((resolve) => closed.server.close(() => resolve()));
  });
  afterAll(() => {
    for (const s of [healthy, silent, stalling, failing]) {
      s?.server.closeAllConnections();
      s?.server.close();
    }
  });

  it("reads 'self' as the page's origin and bare names as https", () => {
    expect(parseHosts(undefined, 'http://localhost:3000')).toEqual([
      { url: 'localhost', accept: 'read', protocol: 'http', port: 3000 },
    ]);
    expect(parseHosts(['search.example.com', 'self'], 'https://docs.example.com')).toEqual([
      { url: 'search.example.com', accept: 'read', protocol: 'https' },
      { url: 'docs.example.com', accept: 'read', protocol: 'https' },
    ]);
    expect(SEARCH_TIMEOUTS).toEqual({ connect: 1000, read: 2000, write: 30000 });
  });

  it('tries the next host on a network failure', async () => {
    const client = createSearchClient(
      SEARCH_DEFAULTS.appId,
      SEARCH_DEFAULTS.apiKey,
      [refusedHost, healthy.host],
      createHostsCache(),
    );
    const first = await client.search(request('relight'));
    expect((first.results[0] as { hits: unknown[] }).hits.length).toBeGreaterThan(0);
  });

  it('tries the next host after a 5xx, and retries the failed host only after 120 s', async () => {
    const client = createSearchClient(
      SEARCH_DEFAULTS.appId,
      SEARCH_DEFAULTS.apiKey,
      [failing.host, healthy.host],
      createHostsCache(),
    );
    const before = failing.requests;
    await client.search(request('relight'));
    await client.search(request('upscale'));
    expect(failing.requests - before).toBe(1);
    const realNow = Date.now;
    try {
      Date.now = () => realNow() + 121_000;
      await client.search(request('photomaker'));
    } finally {
      Date.now = realNow;
    }
    expect(failing.requests - before).toBe(2);
  });

  it('gives up on a host whose answer does not start within the 1 s connect timeout', async () => {
    const client = createSearchClient(
      SEARCH_DEFAULTS.appId,
      SEARCH_DEFAULTS.apiKey,
      [silent.host, healthy.host],
      createHostsCache(),
    );
    const started = Date.now();
    const response = await client.search(request('relight'));
    const elapsed = Date.now() - started;
    expect((response.results[0] as { hits: unknown[] }).hits.length).toBeGreaterThan(0);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(1900);
  });

  it('gives up on a host whose answer stalls for the 2 s read timeout', async () => {
    const client = createSearchClient(
      SEARCH_DEFAULTS.appId,
      SEARCH_DEFAULTS.apiKey,
      [stalling.host, healthy.host],
      createHostsCache(),
    );
    const started = Date.now();
    const response = await client.search(request('relight'));
    const elapsed = Date.now() - started;
    expect((response.results[0] as { hits: unknown[] }).hits.length).toBeGreaterThan(0);
    expect(elapsed).toBeGreaterThanOrEqual(1950);
    expect(elapsed).toBeLessThan(3500);
  });

  it('fails, so that the modal shows its error screen, when every host fails', async () => {
    const client = createSearchClient(
      SEARCH_DEFAULTS.appId,
      SEARCH_DEFAULTS.apiKey,
      [refusedHost, failing.host],
      createHostsCache(),
    );
    await expect(client.search(request('relight'))).rejects.toMatchObject({ name: 'RetryError' });
  });
});
