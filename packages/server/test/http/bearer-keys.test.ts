import { describe, expect, it } from 'vitest';
import { useInjectedApi } from '../support/injected-api.ts';

const SUBMIT = '/sd/text2image/v1';
const WRONG = 'ig_0123456789abcdefghijABCDEFGHIJ01';
const BODY = { prompt: 'a lighthouse at dawn', negative_prompt: '' };
/** An allowance of 4 wrong keys at once, then one a second (the clock below never moves). */
const LIMITS = { burst: 4, perSecond: 1 };
/** What a browser's preflight is answered when it sends the API's own headers. */
const OWN_HEADERS =
  'API-Key, Content-Type, Prefer, Idempotency-Key, Cancel-After, Last-Event-ID, X-Request-Id';

describe('keys sent as Authorization: Bearer', () => {
  const api = useInjectedApi({ authFailureLimits: LIMITS, authClock: () => 1_000_000 });

  const inject = (
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string>,
    from = '198.51.100.1',
  ) =>
    api.app.inject({
      method,
      url,
      headers,
      remoteAddress: from,
      ...(method === 'POST' ? { payload: BODY } : {}),
    });

  it('submits, reads the status and the task list as the API-Key header does, byte for byte', async () => {
    const submitted = await inject('POST', SUBMIT, { authorization: `Bearer ${api.key}` });
    expect(submitted.statusCode).toBe(200);
    const { id } = submitted.json() as { id: string };
    const byBearer = await inject('GET', `${SUBMIT}/status/${id}`, { authorization: `Bearer ${api.key}` });
    const byHeader = await inject('GET', `${SUBMIT}/status/${id}`, { 'api-key': api.key });
    expect(byBearer.statusCode).toBe(200);
    expect(byBearer.body).toBe(byHeader.body);
    const listed = await inject('GET', '/tasks/v1', { authorization: `Bearer ${api.key}` });
    expect(listed.json()).toMatchObject({ tasks: [{ id }] });
  });

  it('reads the scheme in any case and the token between any blanks', async () => {
    for (const authorization of [`bearer ${api.key}`, `BEARER \t${api.key}  `]) {
      expect((await inject('GET', '/tasks/v1', { authorization })).statusCode).toBe(200);
    }
  });

  it('reads API-Key first when a request carries both', async () => {
    const both = await inject('GET', '/tasks/v1', { 'api-key': api.key, authorization: `Bearer ${WRONG}` });
    expect(both.statusCode).toBe(200);
    const wrongHeader = await inject('GET', '/tasks/v1', {
      'api-key': WRONG,
      authorization: `Bearer ${api.key}`,
    });
    expect(wrongHeader.statusCode).toBe(401);
  });

  it('answers another scheme, or a Bearer without a token, as a missing key', async () => {
    for (const authorization of [
      `Basic ${Buffer.from(`x:${api.key}`).toString('base64')}`,
      'Bearer',
      'Bearer  ',
    ]) {
      const refused = await inject('GET', '/tasks/v1', { authorization });
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toEqual({ detail: 'Missing API key: send it in the API-Key header' });
    }
  });

  it('counts a wrong Bearer key against the same allowance as a wrong API-Key', async () => {
    const from = '203.0.113.50';
    for (let n = 0; n < LIMITS.burst; n++) {
      const headers: Record<string, string> =
        n % 2 === 0 ? { authorization: `Bearer ${WRONG}` } : { 'api-key': WRONG };
      const refused = await inject('GET', '/tasks/v1', headers, from);
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toEqual({ detail: 'Invalid API key' });
    }
    for (const headers of [{ authorization: `Bearer ${WRONG}` }, { 'api-key': WRONG }] as Record<
      string,
      string
    >[]) {
      const throttled = await inject('GET', '/tasks/v1', headers, from);
      expect(throttled.statusCode).toBe(429);
      expect(throttled.headers['retry-after']).toBe('1');
    }
    // A valid Bearer key from that address is still served.
    expect((await inject('GET', '/tasks/v1', { authorization: `Bearer ${api.key}` }, from)).statusCode).toBe(
      200,
    );
  });

  it("lets a browser send Authorization when its preflight asks, and answers others' as before", async () => {
    const preflight = (requested?: string) =>
      api.app.inject({
        method: 'OPTIONS',
        url: SUBMIT,
        headers: {
          origin: 'https://app.example.com',
          'access-control-request-method': 'POST',
          ...(requested === undefined ? {} : { 'access-control-request-headers': requested }),
        },
      });
    expect((await preflight('authorization,content-type')).headers['access-control-allow-headers']).toBe(
      `${OWN_HEADERS}, Authorization`,
    );
    for (const requested of [undefined, 'api-key,content-type', 'x-authorization']) {
      expect((await preflight(requested)).headers['access-control-allow-headers']).toBe(OWN_HEADERS);
    }
  });
});
