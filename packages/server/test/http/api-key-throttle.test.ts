import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { type Authenticator, createAuthenticator } from '../../src/auth/authenticator.ts';
import { authFailureLimitsFromEnv, clientNetwork } from '../../src/http/api-key-auth.ts';
import { buildApiRole } from '../../src/http/api-role.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const SUBMIT = '/sd/text2image/v1';
const WRONG = 'ig_0123456789abcdefghijABCDEFGHIJ01';
const NOBODY = '00000000-0000-0000-0000-000000000000';
/** An allowance of 5 wrong keys at once, then one a second. */
const LIMITS = { burst: 5, perSecond: 1 };

describe('wrong API keys from one address', () => {
  let db: TestDatabase;
  let dataDir: string;
  let app: FastifyInstance;
  let authenticator: Authenticator;
  let key: string;
  let now = 1_000_000;
  const metrics = new Metrics();

  beforeAll(async () => {
    db = await createTestDatabase();
    dataDir = await mkdtemp(path.join(tmpdir(), 'imagegen-throttle-'));
    key = (await createOwner(db.pool, { name: 'alice', plan: 'STANDARD' })).apiKey;
    authenticator = createAuthenticator(db.pool);
    // The allowance as an operator sets it, read the way `npm start` reads it.
    const env = { AUTH_FAILURE_BURST: String(LIMITS.burst), AUTH_FAILURE_RATE: String(LIMITS.perSecond) };
    ({ app } = await buildApiRole({ publicUrl: 'http://127.0.0.1:8000', docsPort: 3000 }, env, {
      pool: db.pool,
      authenticator,
      store: new LocalBlobStore(path.join(dataDir, 'files')),
      engines: () => [],
      metrics,
      authClock: () => now,
      readiness: { checks: {}, stopping: false },
    }));
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const status = (from: string, apiKey: string | null) =>
    app.inject({
      method: 'GET',
      url: `${SUBMIT}/status/${NOBODY}`,
      remoteAddress: from,
      headers: apiKey === null ? {} : { 'api-key': apiKey },
    });
  const submit = (from: string, apiKey: string) =>
    app.inject({
      method: 'POST',
      url: SUBMIT,
      remoteAddress: from,
      headers: { 'api-key': apiKey },
      payload: { prompt: 'a lighthouse at dawn', negative_prompt: '' },
    });
  const counted = async () => {
    const text = await metrics.render();
    const value = (series: string) =>
      Number(
        text
          .split('\n')
          .find((line) => line.startsWith(`${series} `))
          ?.split(' ')[1] ?? 0,
      );
    return {
      invalid: value('imagegen_auth_failures_total{reason="invalid"}'),
      missing: value('imagegen_auth_failures_total{reason="missing"}'),
      throttled: value('imagegen_auth_throttled_total'),
    };
  };

  it('answers 401 as before for the burst, then 429 with Retry-After, counting both', async () => {
    for (let n = 0; n < LIMITS.burst; n++) {
      const refused = await status('203.0.113.7', WRONG);
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toEqual({ detail: 'Invalid API key' });
      expect(refused.headers['retry-after']).toBeUndefined();
    }
    for (const refused of [await status('203.0.113.7', WRONG), await submit('203.0.113.7', WRONG)]) {
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers['content-type']).toContain('application/json');
      expect(refused.json()).toEqual({
        detail: 'Too many invalid API keys from this address: retry after 1 s',
      });
    }
    expect(await counted()).toEqual({ invalid: LIMITS.burst + 2, missing: 0, throttled: 2 });
  });

  it('still serves a valid key from that address, cached or looked up', async () => {
    expect((await status('203.0.113.7', WRONG)).statusCode).toBe(429);
    const submitted = await submit('203.0.113.7', key);
    expect(submitted.statusCode).toBe(200);
    expect(submitted.json()).toMatchObject({ status: 'PENDING' });
    authenticator.clear(); // the next request looks the key up in the database again
    const polled = await app.inject({
      method: 'GET',
      url: `${SUBMIT}/status/${submitted.json().id}`,
      remoteAddress: '203.0.113.7',
      headers: { 'api-key': key },
    });
    expect(polled.statusCode).toBe(200);
    expect((await status('203.0.113.7', key)).statusCode).toBe(404);
  });

  it('answers a missing key 401 as before, throttled address or not, without limiting it', async () => {
    const before = await counted();
    const missing = await status('203.0.113.7', null);
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toEqual({ detail: 'Missing API key: send it in the API-Key header' });
    expect(await counted()).toEqual({ ...before, missing: before.missing + 1 });
  });

  it('leaves other addresses alone', async () => {
    expect((await status('203.0.113.7', WRONG)).statusCode).toBe(429);
    const elsewhere = await status('198.51.100.9', WRONG);
    expect(elsewhere.statusCode).toBe(401);
    expect(elsewhere.json()).toEqual({ detail: 'Invalid API key' });
    // IPv6: another /64 is another client; the same /64 is the same one.
    for (let n = 0; n < LIMITS.burst; n++)
      expect((await status('2001:db8:1:2::1', WRONG)).statusCode).toBe(401);
    expect((await status('2001:db8:1:2::ffff', WRONG)).statusCode).toBe(429);
    expect((await status('2001:db8:1:3::1', WRONG)).statusCode).toBe(401);
  });

  it('refills the allowance as time passes: one wrong key a second here', async () => {
    expect((await status('203.0.113.7', WRONG)).statusCode).toBe(429);
    now += 999;
    expect((await status('203.0.113.7', WRONG)).statusCode).toBe(429);
    now += 1;
    expect((await status('203.0.113.7', WRONG)).statusCode).toBe(401);
    expect((await status('203.0.113.7', WRONG)).statusCode).toBe(429);
    now += LIMITS.burst * 1000;
    for (let n = 0; n < LIMITS.burst; n++) expect((await status('203.0.113.7', WRONG)).statusCode).toBe(401);
    expect((await status('203.0.113.7', WRONG)).statusCode).toBe(429);
  });
});

describe('the client network a failure counts against', () => {
  it('is an IPv4 address itself (also written IPv4-mapped), and an IPv6 address its /64', () => {
    expect(clientNetwork('203.0.113.7')).toBe('203.0.113.7');
    expect(clientNetwork('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientNetwork('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:0db8:0001:0002::1')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('::1')).toBe('0:0:0:0::/64');
  });
});

describe('the limits settings', () => {
  it('default to 20 at once, then 2 a second', () => {
    expect(authFailureLimitsFromEnv({})).toEqual({ burst: 20, perSecond: 2 });
  });

  it('read AUTH_FAILURE_BURST and AUTH_FAILURE_RATE, and refuse nonsense by name', () => {
    expect(authFailureLimitsFromEnv({ AUTH_FAILURE_BURST: '50', AUTH_FAILURE_RATE: '0.5' })).toEqual({
      burst: 50,
      perSecond: 0.5,
    });
    expect(() => authFailureLimitsFromEnv({ AUTH_FAILURE_BURST: '0' })).toThrow('AUTH_FAILURE_BURST=0');
    expect(() => authFailureLimitsFromEnv({ AUTH_FAILURE_RATE: 'fast' })).toThrow('AUTH_FAILURE_RATE=fast');
  });
});
