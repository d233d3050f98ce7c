import { fromStored } from '@imagegen/db';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ANALYTICS_PATH, analyticsRoutes } from '../../src/analytics/analytics-routes.ts';
import { countPageViews } from '../../src/analytics/sql/countPageViews.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const DOCS = 'http://localhost:3000';
let db: TestDatabase;
let app: FastifyInstance;

function pageView(path: string, extra: Record<string, unknown> = {}) {
  return { type: 'page_view', path, referrer: null, ...extra };
}

function post(body: unknown, headers: Record<string, string> = {}, remoteAddress = '10.0.0.1') {
  return app.inject({
    method: 'POST',
    url: ANALYTICS_PATH,
    remoteAddress,
    headers: { 'content-type': 'text/plain;charset=UTF-8', origin: DOCS, ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function storedPaths(): Promise<string[]> {
  const { rows } = await db.pool.query<{ path: string }>('SELECT path FROM analytics_events ORDER BY id');
  return rows.map((r) => r.path);
}

beforeAll(async () => {
  db = await createTestDatabase();
  app = Fastify();
  await app.register(analyticsRoutes, { pool: db.pool, allowedOrigins: [DOCS], eventsPerMinute: 5 });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  await db.drop();
});

beforeEach(async () => {
  await db.pool.query('TRUNCATE analytics_events');
});

describe('POST /analytics/v1/events', () => {
  it('stores a page view the docs site sends as text/plain JSON and allows its origin', async () => {
    const res = await post({ events: [pageView('/Introduction/getting-started', { referrer: '/' })] });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: 1 });
    expect(res.headers['access-control-allow-origin']).toBe(DOCS);
    const { rows } = await db.pool.query('SELECT type, path, referrer, origin FROM analytics_events');
    expect(rows).toEqual([
      { type: 'page_view', path: '/Introduction/getting-started', referrer: '/', origin: DOCS },
    ]);
    expect(await countPageViews(db.pool, new Date(Date.now() - 60_000))).toEqual([
      { path: '/Introduction/getting-started', views: 1 },
    ]);
  });

  it('answers the CORS preflight of an application/json post from the docs origin', async () => {
    const res = await app.inject({
      method: 'OPTIONS',
      url: ANALYTICS_PATH,
      headers: { origin: DOCS, 'access-control-request-method': 'POST' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(DOCS);
    expect(res.headers['access-control-allow-headers']).toBe('Content-Type');
    const json = await post(
      { events: [pageView('/schema')] },
      { 'content-type': 'application/json' },
      '10.0.0.2',
    );
    expect(json.statusCode).toBe(202);
  });

  it('refuses events from an origin that is not the docs site, storing nothing', async () => {
    const res = await post({ events: [pageView('/')] }, { origin: 'https://evil.example' });
    expect(res.statusCode).toBe(403);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(await storedPaths()).toEqual([]);
  });

  it('names each invalid event field in a 422 detail list and stores none of the batch', async () => {
    const res = await post(
      { events: [pageView('/ok'), { type: 'click', path: '/' }, pageView('no-slash')] },
      {},
      '10.0.0.3',
    );
    expect(res.statusCode).toBe(422);
    expect(res.json().detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'events', 1, 'type'],
      ['body', 'events', 2, 'path'],
    ]);
    expect(await storedPaths()).toEqual([]);
  });

  it('stores any path or referrer as it was sent, U+0000 and lone surrogates included', async () => {
    const paths = ['/a\u0000b', '/\ud800', '/x\udfff\u0000'];
    const events = [...paths.map((path) => pageView(path)), pageView('/ok', { referrer: 'x\u0000\ud800' })];
    const res = await post({ events }, {}, '10.0.0.8');
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: 4 });
    const views = await countPageViews(db.pool, new Date(Date.now() - 60_000));
    expect(views.map((view) => view.path).sort()).toEqual([...paths, '/ok'].sort());
    const { rows } = await db.pool.query<{ referrer: string | null }>(
      "SELECT referrer FROM analytics_events WHERE path = '/ok'",
    );
    expect(fromStored(rows)).toEqual([{ referrer: 'x\u0000\ud800' }]);
  });

  it('rejects a body larger than 8 KiB with 413', async () => {
    const res = await post({ events: [pageView(`/${'a'.repeat(9000)}`)] }, {}, '10.0.0.4');
    expect(res.statusCode).toBe(413);
  });

  it('limits each client to its events per minute with 429', async () => {
    const first = await post({ events: [1, 2, 3, 4].map((n) => pageView(`/p${n}`)) }, {}, '10.0.0.5');
    expect(first.statusCode).toBe(202);
    const second = await post({ events: [pageView('/p5'), pageView('/p6')] }, {}, '10.0.0.5');
    expect(second.statusCode).toBe(429);
    const otherClient = await post({ events: [pageView('/p7')] }, {}, '10.0.0.6');
    expect(otherClient.statusCode).toBe(202);
    expect(await storedPaths()).toEqual(['/p1', '/p2', '/p3', '/p4', '/p7']);
  });

  it('keeps the browser time when plausible and uses the server time otherwise', async () => {
    const recent = new Date(Date.now() - 5 * 60_000).toISOString();
    await post(
      {
        events: [
          pageView('/a', { occurred_at: recent }),
          pageView('/b', { occurred_at: '1999-01-01T00:00:00Z' }),
        ],
      },
      {},
      '10.0.0.7',
    );
    const { rows } = await db.pool.query<{ path: string; occurred_at: Date; received_at: Date }>(
      'SELECT path, occurred_at, received_at FROM analytics_events ORDER BY path',
    );
    expect(rows[0]!.occurred_at.toISOString()).toBe(recent);
    expect(Math.abs(rows[1]!.occurred_at.getTime() - rows[1]!.received_at.getTime())).toBeLessThan(60_000);
  });
});
