import type { Queryable } from '@imagegen/db';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { TokenBuckets } from '../http/token-buckets.ts';
import { type AnalyticsEventRow, insertAnalyticsEvents } from './sql/insertAnalyticsEvents.ts';

export const ANALYTICS_PATH = '/analytics/v1/events';
/** A page view is ~200 bytes; a batch of the most events allowed fits well inside this. */
const ANALYTICS_BODY_LIMIT = 8 * 1024;
const MAX_EVENTS_PER_REQUEST = 20;
const MAX_TEXT = 2048;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface AnalyticsOptions {
  pool: Queryable;
  /** Origins of the documentation site allowed to post (CORS), e.g. `http://localhost:3000`. */
  allowedOrigins: readonly string[];
  /** Events accepted per client address per minute (default 120). */
  eventsPerMinute?: number;
}

interface DetailEntry {
  loc: (string | number)[];
  msg: string;
  type: string;
}

function invalid(loc: (string | number)[], msg: string): DetailEntry {
  return { loc: ['body', ...loc], msg, type: 'value_error' };
}

function optionalText(value: unknown): value is string | null | undefined {
  return value === undefined || value === null || (typeof value === 'string' && value.length <= MAX_TEXT);
}

/** Checks one posted event; returns the row to store or what is wrong with it. */
function readEvent(raw: unknown, index: number, now: number): AnalyticsEventRow | DetailEntry {
  if (typeof raw !== 'object' || raw === null) return invalid(['events', index], 'value is not an object');
  const event = raw as Record<string, unknown>;
  if (event.type !== 'page_view') {
    return invalid(['events', index, 'type'], "unexpected value; permitted: 'page_view'");
  }
  if (typeof event.path !== 'string' || !event.path.startsWith('/') || event.path.length > MAX_TEXT) {
    return invalid(
      ['events', index, 'path'],
      `must be a path starting with / of at most ${MAX_TEXT} characters`,
    );
  }
  if (!optionalText(event.referrer)) {
    return invalid(['events', index, 'referrer'], `must be a string of at most ${MAX_TEXT} characters`);
  }
  const claimed = typeof event.occurred_at === 'string' ? Date.parse(event.occurred_at) : Number.NaN;
  const occurredAt = Number.isFinite(claimed) && Math.abs(claimed - now) <= DAY_MS ? claimed : now;
  return {
    type: 'page_view',
    path: event.path,
    referrer: event.referrer ?? null,
    origin: null,
    userAgent: null,
    occurredAt: new Date(occurredAt),
  };
}

/**
 * POST /analytics/v1/events: page views from the documentation site, stored in analytics_events.
 * The site sends JSON as text/plain (a "simple" CORS request, no preflight); application/json is
 * accepted too, with its preflight answered here. Bounded by body size, events per request and
 * events per client per minute. Registered by the API app.
 */
export const analyticsRoutes: FastifyPluginAsync<AnalyticsOptions> = async (app, options) => {
  const allowed = new Set(options.allowedOrigins.map((o) => o.replace(/\/+$/, '')));
  const perMinute = options.eventsPerMinute ?? 120;
  const limiter = new TokenBuckets({ capacity: perMinute, perSecond: perMinute / 60 });

  // Encapsulated in this plugin: the API's own parsers are left as they are.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    ['application/json', 'text/plain'],
    { parseAs: 'string', bodyLimit: ANALYTICS_BODY_LIMIT },
    (_req, body, done) => done(null, body),
  );

  function corsFor(request: FastifyRequest, reply: FastifyReply): boolean {
    const origin = request.headers.origin;
    if (origin === undefined) return true;
    if (!allowed.has(origin)) return false;
    reply.header('Access-Control-Allow-Origin', origin).header('Vary', 'Origin');
    return true;
  }

  app.options(ANALYTICS_PATH, async (request, reply) => {
    if (!corsFor(request, reply)) return reply.code(403).send({ detail: 'Origin not allowed' });
    return reply
      .code(204)
      .header('Access-Control-Allow-Methods', 'POST')
      .header('Access-Control-Allow-Headers', 'Content-Type')
      .header('Access-Control-Max-Age', '86400')
      .send();
  });

  app.post(ANALYTICS_PATH, { bodyLimit: ANALYTICS_BODY_LIMIT }, async (request, reply) => {
    if (!corsFor(request, reply)) return reply.code(403).send({ detail: 'Origin not allowed' });
    let parsed: unknown;
    try {
      parsed = JSON.parse(String(request.body ?? ''));
    } catch {
      return reply
        .code(422)
        .send({ detail: [{ loc: ['body'], msg: 'body is not valid JSON', type: 'value_error.jsondecode' }] });
    }
    const list = (parsed as { events?: unknown })?.events;
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_EVENTS_PER_REQUEST) {
      return reply.code(422).send({
        detail: [invalid(['events'], `must be a list of 1 to ${MAX_EVENTS_PER_REQUEST} events`)],
      });
    }
    const now = Date.now();
    const rows: AnalyticsEventRow[] = [];
    const problems: DetailEntry[] = [];
    list.forEach((raw, index) => {
      const result = readEvent(raw, index, now);
      if ('loc' in result) problems.push(result);
      else rows.push(result);
    });
    if (problems.length > 0) return reply.code(422).send({ detail: problems });
    if (limiter.take(request.ip, rows.length) > 0) {
      return reply
        .code(429)
        .header('Retry-After', '60')
        .send({ detail: 'Too many analytics events: slow down' });
    }
    const origin = request.headers.origin ?? null;
    const userAgent = request.headers['user-agent']?.slice(0, 512) ?? null;
    const stored = await insertAnalyticsEvents(
      options.pool,
      rows.map((row) => ({ ...row, origin, userAgent })),
    );
    return reply.code(202).send({ accepted: stored });
  });
};
