import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, lineLog } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { startWebhookDispatcher } from '../../src/webhooks/webhook-dispatcher.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

const TEXT2IMAGE = '/sd/text2image/v1';
const REQUEST_ID = 'trace-7f3a.submit';

interface LogLine {
  level: string;
  msg: string;
  component?: string;
  requestId?: string | null;
  taskId?: string | null;
  [field: string]: unknown;
}

/**
 * One task with a webhook, from submission to delivery, with every log line of the API, the
 * worker and the dispatcher captured: the request id follows the task through all three, and no
 * key, secret or signature is ever written.
 */
describe('JSON logs of a task from submit to webhook', () => {
  const written: string[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => written.push(line) },
  });
  const metrics = new Metrics();
  let api: ApiHarness;
  let receiver: http.Server;
  let receiverUrl: string;
  const signatures: string[] = [];
  const stop = new AbortController();
  let dispatcher: Promise<void>;

  beforeAll(async () => {
    api = await startApiHarness({ logger, metrics, webhooks: true });
    // The receiver refuses the first delivery, so a retry's lines are captured too.
    receiver = http.createServer((request, response) => {
      signatures.push(String(request.headers['webhook-signature']));
      request.resume();
      request.on('end', () => response.writeHead(signatures.length === 1 ? 500 : 204).end());
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook?token=receiver-query-token`;
    dispatcher = startWebhookDispatcher({
      pool: api.db.pool,
      signal: stop.signal,
      allowPrivate: true,
      pollMs: 100,
      retry: { firstDelayMs: 100, factor: 1, maxDelayMs: 100, maxAttempts: 3 },
      log: lineLog(logger.child({ component: 'webhooks' })),
      metrics,
    }).stopped;
  });
  afterAll(async () => {
    stop.abort();
    await dispatcher;
    receiver.closeAllConnections();
    await new Promise((done) => receiver.close(done));
    await api.close();
  });

  it('carries the request id from the API through the worker to the webhook, and writes no secret', {
    timeout: 30_000,
  }, async () => {
    const submitted = await api.request('POST', TEXT2IMAGE, {
      json: { ...api.example(TEXT2IMAGE), webhook: receiverUrl },
      headers: { 'x-request-id': REQUEST_ID, authorization: 'Bearer caller-bearer-credential' },
    });
    expect(submitted.status).toBe(200);
    const id = (submitted.body as { id: string }).id;
    const done = await api.settle(`${TEXT2IMAGE}/status/${id}`, api.alice.key);
    expect(done.status).toBe('SUCCESS');
    // A link as a presigned redirect would carry its signature in the query.
    const file = new URL(String((done.download_urls as string[])[0]));
    const fetched = await api.request('GET', `${file.pathname}?X-Amz-Signature=presigned-query-signature`, {
      key: null,
    });
    expect(fetched.status).toBe(200);
    // A refused key is not written either.
    expect(
      (await api.request('GET', `${TEXT2IMAGE}/status/${id}`, { key: 'ig_refused-key-value' })).status,
    ).toBe(401);

    const deadline = Date.now() + 20_000;
    const lines = () => written.map((line) => JSON.parse(line) as LogLine);
    while (!lines().some((line) => line.msg === 'webhook delivered')) {
      if (Date.now() > deadline) throw new Error(`no delivery logged:\n${written.join('')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    // Every line is one JSON object with a level and a message.
    for (const line of lines())
      expect(typeof line.level === 'string' && typeof line.msg === 'string').toBe(true);
    const traced = lines().filter((line) => line.requestId === REQUEST_ID);
    const said = traced.map((line) => `${line.component}: ${line.msg}`);
    expect(said).toEqual(
      expect.arrayContaining([
        'api: task submitted',
        'api: request',
        'worker: task claimed',
        'worker: task succeeded',
        'webhooks: webhook delivered',
      ]),
    );
    // The refused first delivery's line carries it too.
    expect(traced.some((line) => line.component === 'webhooks' && line.level === 'warn')).toBe(true);
    for (const line of traced.filter((line) => line.component !== 'api' || line.msg !== 'request')) {
      expect(line.taskId).toBe(id);
    }

    const owner = await api.db.pool.query<{ webhook_secret: string }>(
      'SELECT webhook_secret FROM owners WHERE id = $1',
      [api.alice.ownerId],
    );
    const secret = owner.rows[0]!.webhook_secret;
    expect(signatures.length).toBeGreaterThanOrEqual(2);
    const everything = written.join('');
    const secrets = [
      api.alice.key,
      'ig_refused-key-value',
      secret,
      secret.slice('whsec_'.length),
      'caller-bearer-credential',
      'presigned-query-signature',
      'receiver-query-token',
      ...signatures,
      ...signatures.map((signature) => signature.slice('v1,'.length)),
    ];
    for (const value of secrets) expect(everything, value).not.toContain(value);
  });

  it('censors secret fields whoever logs them', () => {
    const lines: string[] = [];
    const censoring = createLogger({ destination: { write: (line: string) => lines.push(line) } });
    censoring.info(
      {
        headers: { 'api-key': 'k-1', authorization: 'Bearer t-1', 'webhook-signature': 'v1,s-1' },
        secret: 's-2',
      },
      'careless line',
    );
    lineLog(censoring)('careless worker line', { webhook_secret: 'whsec_s-3', apiKey: 'k-2' });
    const text = lines.join('');
    for (const value of ['k-1', 't-1', 's-1', 's-2', 's-3', 'k-2']) expect(text).not.toContain(value);
    expect(text.match(/\[redacted\]/g)?.length).toBe(6);
  });
});
