import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import ipaddr from 'ipaddr.js';
import type { Authenticator, Caller } from '../auth/authenticator.ts';
import type { Metrics } from '../observability/metrics.ts';
import { HttpError } from './http-errors.ts';
import { TokenBuckets } from './token-buckets.ts';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
}

const MISSING_KEY = 'Missing API key: send it in the API-Key header';

/** `Authorization: Bearer <key>` (RFC 6750; the scheme's name is case-insensitive). */
const BEARER = /^bearer[ \t]+([^\s]+)[ \t]*$/i;

/**
 * The key a request carries: its `API-Key` header, else the token of an `Authorization: Bearer`
 * header, which OpenAI's clients, MCP clients and the original service's own frontend send. A
 * request with both is read by its `API-Key`, as before Bearer keys were accepted.
 */
export function requestKey(headers: FastifyRequest['headers']): string | undefined {
  const header = headers['api-key'];
  const key = (Array.isArray(header) ? header[0] : header)?.trim();
  if (key) return key;
  const authorization = headers.authorization;
  return authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
}

/** The caller of an authenticated route (set by the onRequest hook below). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new HttpError(401, MISSING_KEY);
  return request.caller;
}

/** How many unknown keys one client address may send before it is answered 429 instead of 401. */
export interface AuthFailureLimits {
  /** Unknown keys allowed at once (AUTH_FAILURE_BURST). */
  readonly burst: number;
  /** Unknown keys allowed per second after that, refilled continuously (AUTH_FAILURE_RATE). */
  readonly perSecond: number;
}

export const DEFAULT_AUTH_FAILURE_LIMITS: AuthFailureLimits = { burst: 20, perSecond: 2 };

/**
 * Client networks whose failures are remembered at once. A network that has not failed for
 * burst / perSecond seconds (10 s by default) has its whole allowance back, so this bounds memory
 * and nothing else, unless more networks than this fail within those seconds.
 */
const MAX_NETWORKS = 100_000;

/** AUTH_FAILURE_BURST and AUTH_FAILURE_RATE (README's configuration table), with their defaults. */
export function authFailureLimitsFromEnv(env: NodeJS.ProcessEnv): AuthFailureLimits {
  const read = (name: string, fallback: number, valid: (n: number) => boolean, what: string) => {
    const value = env[name]?.trim();
    if (value === undefined || value === '') return fallback;
    const n = Number(value);
    if (!valid(n)) throw new Error(`${name}=${value} is not ${what}`);
    return n;
  };
  return {
    burst: read(
      'AUTH_FAILURE_BURST',
      DEFAULT_AUTH_FAILURE_LIMITS.burst,
      (n) => Number.isInteger(n) && n >= 1,
      'a whole number from 1',
    ),
    perSecond: read(
      'AUTH_FAILURE_RATE',
      DEFAULT_AUTH_FAILURE_LIMITS.perSecond,
      (n) => Number.isFinite(n) && n > 0,
      'a number of keys per second above 0',
    ),
  };
}

/**
 * The network a client's failures count against: an IPv4 address itself, an IPv6 address its /64
 * (what one subscriber is given, so rotating through it gains nothing).
 */
export function clientNetwork(ip: string): string {
  if (!ip.includes(':') || !ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  return `${(address as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
}

export interface ApiKeyHookOptions {
  /** Unknown keys allowed per client address (default DEFAULT_AUTH_FAILURE_LIMITS). */
  readonly failureLimits?: AuthFailureLimits;
  /** Where refused keys are counted (default: not counted). */
  readonly metrics?: Metrics;
  /** The clock the allowances refill by (tests inject one; default Date.now). */
  readonly now?: () => number;
}

/**
 * onRequest hook for authenticated routes (the key in `API-Key` or as a Bearer token: requestKey):
 * runs before the body is read, so an unauthenticated client cannot make the server read (or
 * parse) a large body. Callback style, so a cached key (nearly every request of a busy client)
 * costs no promise at all.
 *
 * Requests that arrive while their key is being looked up share that lookup: when a busy client's
 * cached key expires, its many requests in flight would otherwise each query the database at once
 * (measured: 64 lookups of ~6 ms every 5 s at 64 connections). Only a found key is shared; a
 * request that joined a lookup finding nothing looks again, so a key created a moment ago still
 * works at once.
 *
 * Unknown keys are limited per client address (`clientNetwork(request.ip)`): past the burst, the
 * answer is 429 with Retry-After until the address's allowance refills. The key is always looked
 * up first, and only a key found to be unknown takes from the allowance, so a valid key is never
 * slowed or refused, whatever its address sent before (the address may be a proxy or NAT shared
 * with whoever sent the wrong keys). A missing key costs no lookup and is not limited.
 */
export function apiKeyHook(authenticator: Authenticator, options: ApiKeyHookOptions = {}) {
  const { metrics } = options;
  const limits = options.failureLimits ?? DEFAULT_AUTH_FAILURE_LIMITS;
  const allowances = new TokenBuckets({
    capacity: limits.burst,
    perSecond: limits.perSecond,
    maxKeys: MAX_NETWORKS,
    ...(options.now ? { now: options.now } : {}),
  });
  const refuse = (request: FastifyRequest): HttpError => {
    metrics?.authFailures.inc({ reason: 'invalid' });
    // A client that hung up during the lookup has no address any more (and reads no answer).
    const waitMs = allowances.take(clientNetwork(request.ip ?? ''));
    if (waitMs === 0) return new HttpError(401, 'Invalid API key');
    metrics?.authThrottled.inc();
    const seconds = String(Math.ceil(waitMs / 1000));
    return new HttpError(429, `Too many invalid API keys from this address: retry after ${seconds} s`, {
      'retry-after': seconds,
    });
  };
  const lookups = new Map<string, Promise<Caller | null>>();
  const lookUp = (key: string): Promise<Caller | null> => {
    const lookup = authenticator.authenticate(key).finally(() => lookups.delete(key));
    lookups.set(key, lookup);
    return lookup;
  };
  return function authenticate(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ): void {
    const key = requestKey(request.headers);
    if (!key) {
      metrics?.authFailures.inc({ reason: 'missing' });
      done(new HttpError(401, MISSING_KEY));
      return;
    }
    const hit = authenticator.cached(key);
    if (hit) {
      request.caller = hit;
      done();
      return;
    }
    const shared = lookups.get(key);
    const lookup = shared ? shared.then((caller) => caller ?? authenticator.authenticate(key)) : lookUp(key);
    lookup.then((caller) => {
      if (caller) request.caller = caller;
      done(caller ? undefined : refuse(request));
    }, done);
  };
}
