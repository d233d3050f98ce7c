/**
 * The docs search service: Algolia's query contract over our own index, as a plain node:http
 * handler the docs host mounts on its port (and standalone.ts serves alone).
 *
 *   POST /1/indexes/{index or *}/queries   {requests: [...]} -> {results: [...]}
 *   POST /1/indexes/{index}/query          one search       -> one result
 *   POST /1/events                         insights events (view, click, conversion)
 *
 * Credentials come in query parameters (x-algolia-application-id, x-algolia-api-key, as the
 * browser client sends them) or in the same-named headers, and must be the search-only pair.
 * Every answer carries CORS headers; errors are Algolia-shaped: {"message": "...", "status": n}.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { AlgoliaError } from './algolia-error.ts';
import { type InsightsStore, parseInsightsBody } from './insights.ts';
import type { DocSearchRecord } from './records.ts';
import { SearchIndex } from './search-index.ts';
import { isObject, MAX_REQUESTS, parseSearchRequest } from './search-request.ts';

const MAX_BODY_BYTES = 64 * 1024;

export interface SearchServiceOptions {
  records: DocSearchRecord[];
  appId: string;
  /** The search-only key the site ships with. */
  apiKey: string;
  indexName: string;
  /** Where insights events go; without it /1/events answers 503. */
  insights?: InsightsStore;
}

export interface SearchService {
  /** Handles the request when it is one of the service's paths; false leaves it to the caller. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Swaps the records (after a docs rebuild) without dropping requests. */
  replaceRecords(records: DocSearchRecord[]): void;
  readonly index: SearchIndex;
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers':
    'content-type, x-algolia-application-id, x-algolia-api-key, x-algolia-agent, x-algolia-usertoken',
  'access-control-max-age': '86400',
};

const QUERIES_PATH = /^\/1\/indexes\/([^/]+)\/queries$/;
const QUERY_PATH = /^\/1\/indexes\/([^/]+)\/query$/;
const EVENTS_PATH = '/1/events';

export function createSearchService(options: SearchServiceOptions): SearchService {
  let index = new SearchIndex(options.records);

  const search = (entry: unknown, position: number) => {
    const request = parseSearchRequest(entry, position);
    if (request.indexName !== options.indexName) {
      throw new AlgoliaError(404, `Index ${request.indexName} does not exist`);
    }
    const started = performance.now();
    const result = index.search(request.params);
    return {
      ...result,
      exhaustiveNbHits: true,
      exhaustive: { nbHits: true },
      query: request.params.query,
      params: request.echo,
      index: options.indexName,
      processingTimeMS: Math.round(performance.now() - started),
      renderingContent: {},
      ...(request.clickAnalytics ? { queryID: randomBytes(16).toString('hex') } : {}),
    };
  };

  const routes = async (req: IncomingMessage, url: URL): Promise<unknown> => {
    checkCredentials(req, url, options);
    const body = await readJson(req);
    const path = url.pathname;
    if (path === EVENTS_PATH) {
      if (!options.insights) throw new AlgoliaError(503, 'Insights storage is not configured');
      const events = parseInsightsBody(body, options.indexName);
      await options.insights.record(events);
      return { status: 200, message: 'OK' };
    }
    const single = QUERY_PATH.exec(path);
    if (single) {
      return search({ ...(isObject(body) ? body : {}), indexName: pathSegment(single[1]!) }, 0);
    }
    if (!isObject(body) || !Array.isArray(body.requests)) {
      throw new AlgoliaError(400, 'The body must be an object with a requests array');
    }
    if (body.requests.length === 0 || body.requests.length > MAX_REQUESTS) {
      throw new AlgoliaError(400, `requests must hold 1 to ${MAX_REQUESTS} queries`);
    }
    return { results: body.requests.map(search) };
  };

  return {
    get index() {
      return index;
    },
    replaceRecords(records) {
      index = new SearchIndex(records);
    },
    handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://search.local');
      const path = url.pathname;
      const ours = QUERIES_PATH.test(path) || QUERY_PATH.test(path) || path === EVENTS_PATH;
      if (!ours) return false;
      if (req.method === 'OPTIONS') {
        res.writeHead(204, CORS_HEADERS).end();
        return true;
      }
      if (req.method !== 'POST') {
        req.resume();
        send(res, 405, { message: 'Method not allowed: use POST', status: 405 }, { allow: 'POST, OPTIONS' });
        return true;
      }
      routes(req, url).then(
        (body) => send(res, 200, body),
        (error: unknown) => {
          req.resume();
          // The client went away mid-body: nobody to answer.
          if (req.socket.destroyed || (error as NodeJS.ErrnoException).code === 'ECONNRESET') return;
          const status = error instanceof AlgoliaError ? error.status : 500;
          const message = status === 500 ? 'Internal error' : (error as Error).message;
          if (status === 500) console.error(`[search] ${(error as Error).stack ?? error}`);
          send(res, status, { message, status });
        },
      );
      return true;
    },
  };
}

/** A percent-encoded path segment; one that is not valid percent-encoding (`%ff`) stays as written. */
function pathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function checkCredentials(req: IncomingMessage, url: URL, options: SearchServiceOptions): void {
  const read = (name: string): string | undefined => {
    for (const [key, value] of url.searchParams) if (key.toLowerCase() === name) return value;
    const header = req.headers[name];
    return Array.isArray(header) ? header[0] : header;
  };
  const appId = read('x-algolia-application-id');
  const apiKey = read('x-algolia-api-key');
  if (!appId || !apiKey) {
    throw new AlgoliaError(403, 'Missing x-algolia-application-id or x-algolia-api-key');
  }
  if (appId !== options.appId || apiKey !== options.apiKey) {
    throw new AlgoliaError(403, 'Invalid Application-ID or API key');
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) {
    req.resume();
    throw new AlgoliaError(413, `Request body is too large: at most ${MAX_BODY_BYTES} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      req.resume();
      throw new AlgoliaError(413, `Request body is too large: at most ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new AlgoliaError(400, 'The body is not valid JSON');
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    ...CORS_HEADERS,
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
  });
  res.end(payload);
}
