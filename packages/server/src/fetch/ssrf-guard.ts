import { lookup } from 'node:dns/promises';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { type AddressPolicy, refusalOf } from './address-policy.ts';

/**
 * The one way this service makes a request to a URL a user gave it (input images, webhooks).
 *
 * Defeats DNS rebinding: the name is resolved once, every address is checked, and the socket
 * connects to the checked address (a pinned `lookup`), never to a second resolution. Every
 * redirect is a new hop, checked the same way. Bodies are capped while streaming, so a huge or
 * endless body costs at most the cap.
 */

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to every address it has. Injected in tests; DNS otherwise. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

export interface GuardOptions extends AddressPolicy {
  readonly resolve?: Resolver;
  /** From starting a hop's TCP connect to it being established. */
  readonly connectTimeoutMs?: number;
  /** The whole request: every hop, headers and body. */
  readonly totalTimeoutMs?: number;
  /** Certificate authorities trusted for https instead of Node's bundle (an internal CA, tests). */
  readonly ca?: string | Buffer;
}

export interface GuardedRequestInit {
  readonly method?: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  readonly signal?: AbortSignal;
  /** Redirects followed; beyond that the request fails. Default 5 for GET, 0 (not followed) otherwise. */
  readonly maxRedirects?: number;
  /** Largest body read, in bytes; a larger one fails the request while streaming. */
  readonly maxBytes?: number;
  /** Keep the first maxBytes of a larger body instead of failing (webhook responses). */
  readonly truncateBody?: boolean;
}

export interface GuardedResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The URL of the last hop (after redirects). */
  readonly url: string;
  readonly body: Buffer;
}

/** A refusal or failure whose message is the reason, fit to show the URL's owner. */
export class GuardError extends Error {
  override readonly name = 'GuardError';
  /** A timeout, a network failure or a failed DNS answer: trying later may succeed. */
  readonly transient: boolean;
  constructor(message: string, options: { transient?: boolean } = {}) {
    super(message);
    this.transient = options.transient ?? false;
  }
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_TOTAL_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_BYTES = 20 * 1024 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export async function guardedFetch(
  url: string | URL,
  init: GuardedRequestInit = {},
  options: GuardOptions = {},
): Promise<GuardedResponse> {
  const totalMs = options.totalTimeoutMs ?? DEFAULT_TOTAL_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(totalMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  try {
    const { response, url: last } = await follow(url, init, options, signal);
    return {
      status: response.statusCode ?? 0,
      headers: response.headers,
      url: last.href,
      body: await readCapped(response, init.maxBytes ?? DEFAULT_MAX_BYTES, init.truncateBody ?? false),
    };
  } catch (error) {
    throw asGuardError(error, init.signal, timeout, totalMs);
  }
}

export interface GuardedStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly url: string;
  /** The body, unread: the caller streams it (and destroys it when it stops early). */
  readonly body: IncomingMessage;
}

/**
 * A GET whose body is streamed rather than read (model files of gigabytes): every hop checked as
 * guardedFetch checks it, `totalTimeoutMs` bounds the wait for the answer's headers, and the body
 * fails once it stays silent for `idleTimeoutMs`. The caller caps what it reads.
 */
export async function guardedStream(
  url: string | URL,
  init: Pick<GuardedRequestInit, 'headers' | 'signal' | 'maxRedirects'> & { readonly idleTimeoutMs?: number },
  options: GuardOptions = {},
): Promise<GuardedStream> {
  const totalMs = options.totalTimeoutMs ?? DEFAULT_TOTAL_TIMEOUT_MS;
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), totalMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout.signal]) : timeout.signal;
  try {
    const { response, url: last } = await follow(url, { ...init, method: 'GET' }, options, signal);
    const idleMs = init.idleTimeoutMs ?? totalMs;
    response.setTimeout(idleMs, () =>
      response.destroy(new GuardError(`the body stalled for ${idleMs} ms`, { transient: true })),
    );
    return { status: response.statusCode ?? 0, headers: response.headers, url: last.href, body: response };
  } catch (error) {
    throw asGuardError(error, init.signal, timeout.signal, totalMs);
  } finally {
    clearTimeout(timer);
  }
}

function asGuardError(
  error: unknown,
  callerSignal: AbortSignal | undefined,
  timeout: AbortSignal,
  totalMs: number,
): unknown {
  if (callerSignal?.aborted) return callerSignal.reason;
  if (timeout.aborted) return new GuardError(`timed out after ${totalMs} ms`, { transient: true });
  if (error instanceof GuardError) return error;
  return new GuardError(`request failed: ${describeNetworkError(error)}`, { transient: true });
}

/** Follows redirects, each hop checked; answers the last hop's response with its body unread. */
async function follow(
  start: string | URL,
  init: GuardedRequestInit,
  options: GuardOptions,
  signal: AbortSignal,
): Promise<{ response: IncomingMessage; url: URL }> {
  let url = parseUrl(String(start));
  let method = init.method ?? 'GET';
  let body = init.body;
  let headers = { ...init.headers };
  const maxRedirects = init.maxRedirects ?? (method === 'GET' ? 5 : 0);
  for (let redirects = 0; ; redirects++) {
    const target = await checkHop(url, redirects > 0, options, signal);
    const response = await requestOnce(url, target, method, headers, body, options, signal);
    const location = response.headers.location;
    if (!REDIRECT_STATUSES.has(response.statusCode ?? 0) || !location || maxRedirects === 0) {
      return { response, url };
    }
    response.destroy();
    if (redirects >= maxRedirects) throw new GuardError(`too many redirects (more than ${maxRedirects})`);
    let next: URL;
    try {
      next = parseUrl(new URL(location, url).href);
    } catch (error) {
      throw new GuardError(`redirect to ${JSON.stringify(location)} refused: ${(error as Error).message}`);
    }
    if (next.origin !== url.origin) headers = withoutCredentials(headers);
    if (response.statusCode === 303 || ((response.statusCode ?? 0) <= 302 && method === 'POST')) {
      method = 'GET';
      body = undefined;
    }
    url = next;
  }
}

/** Checks one hop; a refused redirect names its target so the URL's owner can see why. */
async function checkHop(
  url: URL,
  isRedirect: boolean,
  options: GuardOptions,
  signal: AbortSignal,
): Promise<ResolvedAddress> {
  try {
    return await checkHost(url, options, signal);
  } catch (error) {
    if (isRedirect && error instanceof GuardError) {
      throw new GuardError(`redirect to ${url.href} refused: ${error.message}`);
    }
    throw error;
  }
}

/** http(s) URLs without credentials; WHATWG parsing has already canonicalised odd IPv4 spellings. */
function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new GuardError('is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new GuardError(`scheme ${url.protocol.slice(0, -1)} is not allowed (http and https only)`);
  }
  if (url.username || url.password) throw new GuardError('URLs with credentials are not allowed');
  return url;
}

/** Resolves the URL's host once and checks every address; answers the one to connect to. */
async function checkHost(url: URL, options: GuardOptions, signal: AbortSignal): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  if (literal) {
    const refusal = refusalOf(host, options);
    if (refusal) throw new GuardError(`address ${host} is not public (${refusal})`);
    return { address: host, family: literal === 6 ? 6 : 4 };
  }
  let addresses: readonly ResolvedAddress[];
  try {
    addresses = await abortable((options.resolve ?? systemResolver)(host), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    throw new GuardError(`host ${host} could not be resolved`, { transient: true });
  }
  if (addresses.length === 0) throw new GuardError(`host ${host} could not be resolved`);
  // Every address, not just the first: a name with one public and one private address is a
  // rebinding setup, whichever the connect would have picked.
  for (const { address } of addresses) {
    const refusal = refusalOf(address, options);
    if (refusal) throw new GuardError(`address ${address} of ${host} is not public (${refusal})`);
  }
  return addresses[0] as ResolvedAddress;
}

async function requestOnce(
  url: URL,
  target: ResolvedAddress,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  options: GuardOptions,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [target]);
    } else {
      callback(null, target.address, target.family);
    }
  };
  const connectMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method,
      headers: { 'accept-encoding': 'identity', ...headers },
      lookup: pinned,
      // A fresh connection per hop: a pooled socket could be one opened to an earlier answer.
      agent: false,
      signal,
      ...(options.ca !== undefined && url.protocol === 'https:' ? { ca: options.ca } : {}),
    });
    request.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(
        () => request.destroy(new GuardError(`connect timed out after ${connectMs} ms`, { transient: true })),
        connectMs,
      );
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    request.once('response', resolve);
    request.once('error', reject);
    request.end(body);
  });
}

async function readCapped(response: IncomingMessage, maxBytes: number, truncate: boolean): Promise<Buffer> {
  const tooLarge = () => new GuardError(`body is larger than the ${formatBytes(maxBytes)} limit`);
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes && !truncate) {
    response.destroy();
    throw tooLarge();
  }
  const encoding = response.headers['content-encoding'];
  if (encoding && encoding !== 'identity') {
    response.destroy();
    throw new GuardError(`content-encoding ${encoding} is not accepted`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      response.destroy();
      if (!truncate) throw tooLarge();
      chunks.push((chunk as Buffer).subarray(0, (chunk as Buffer).length - (total - maxBytes)));
      return Buffer.concat(chunks, maxBytes);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, total);
}

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !/^(authorization|cookie|proxy-authorization)$/i.test(name)),
  );
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function describeNetworkError(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  return code ?? message ?? String(error);
}

export function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`;
}
