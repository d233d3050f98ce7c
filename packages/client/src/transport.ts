import { ApiError, AuthError, NetworkError, ValidationError } from './errors.ts';
import { sleep } from './sleep.ts';
import type { ValidationIssue } from './types.ts';

/**
 * One HTTP exchange with the API: the key, the base URL, the retries, and the answer's errors
 * turned into the client's typed errors. Only `fetch` is used, so the client runs unchanged in
 * Node 20+, browsers and edge runtimes.
 */

export interface Transport {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  readonly fetch: typeof globalThis.fetch;
  /** How many times a request that got no answer (or a 429, 502, 503, 504) is sent again. */
  readonly retries: number;
  /** The first wait before a retry; each next one doubles. */
  readonly retryDelayMs: number;
}

export interface Exchange {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** The path with its parameters filled in, e.g. `/sd/text2image/v1/status/3f2...`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  readonly json?: unknown;
  readonly form?: FormData;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal | undefined;
  /**
   * Safe to send again when no answer came: reads, and submissions whose Idempotency-Key makes a
   * second one answer the first task instead of queueing another.
   */
  readonly retry: boolean;
}

/** Answers the API may give to a request that is worth sending again a moment later. */
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);
/** The longest wait a Retry-After may ask for before the client gives up instead. */
const MAX_RETRY_AFTER_MS = 30_000;

export function urlOf(transport: Transport, path: string, query?: Exchange['query']): string {
  const url = new URL(transport.baseUrl.replace(/\/+$/, '') + path);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  return url.href;
}

/** Sends the exchange (again, when it may and no answer came) and answers the successful Response. */
export async function send(transport: Transport, exchange: Exchange): Promise<Response> {
  const label = `${exchange.method} ${exchange.path}`;
  const headers: Record<string, string> = { accept: 'application/json', ...exchange.headers };
  if (transport.apiKey) headers['api-key'] = transport.apiKey;
  let body: BodyInit | undefined;
  if (exchange.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(exchange.json);
  } else if (exchange.form) body = exchange.form;
  const url = urlOf(transport, exchange.path, exchange.query);

  for (let attempt = 0; ; attempt++) {
    const retriesLeft = exchange.retry && attempt < transport.retries;
    const backoff = transport.retryDelayMs * 2 ** attempt * (0.75 + Math.random() * 0.5);
    let response: Response;
    try {
      response = await transport.fetch(url, {
        method: exchange.method,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(exchange.signal ? { signal: exchange.signal } : {}),
      });
    } catch (error) {
      if (exchange.signal?.aborted) throw exchange.signal.reason;
      if (!retriesLeft) throw new NetworkError(label, { cause: error });
      await sleep(backoff, exchange.signal);
      continue;
    }
    if (response.ok) return response;
    const wait = retryAfterMs(response) ?? backoff;
    if (retriesLeft && RETRIED_STATUSES.has(response.status) && wait <= MAX_RETRY_AFTER_MS) {
      await response.body?.cancel();
      await sleep(wait, exchange.signal);
      continue;
    }
    throw await errorOf(response, label);
  }
}

/** Sends the exchange and answers its JSON body. */
export async function sendForJson<T>(transport: Transport, exchange: Exchange): Promise<T> {
  const response = await send(transport, exchange);
  return (await response.json()) as T;
}

function retryAfterMs(response: Response): number | undefined {
  const header = response.headers.get('retry-after');
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The typed error of an answer that is not a success. */
export async function errorOf(response: Response, label: string): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let detail: unknown = text;
  try {
    const parsed = JSON.parse(text) as { detail?: unknown };
    detail = parsed !== null && typeof parsed === 'object' && 'detail' in parsed ? parsed.detail : parsed;
  } catch {
    // Not JSON (a proxy's error page): the text is the detail.
  }
  if (response.status === 422 && Array.isArray(detail)) {
    return new ValidationError(detail as ValidationIssue[], label);
  }
  if (response.status === 401 || response.status === 403)
    return new AuthError(response.status, detail, label);
  return new ApiError(response.status, detail, label);
}
