import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inTransaction } from '@imagegen/db';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observability/metrics.ts';
import {
  DEFAULT_RETRY_POLICY,
  type RetryPolicy,
  retryDelayMs,
  retrySpanMs,
} from '../../src/webhooks/retry-schedule.ts';
import {
  startWebhookDispatcher,
  type WebhookDispatcherOptions,
} from '../../src/webhooks/webhook-dispatcher.ts';
import { enqueueWebhook } from '../../src/webhooks/webhook-outbox.ts';
import { newWebhookSecret } from '../../src/webhooks/webhook-signing.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

let db: TestDatabase;
let ownerId: string;
let secret: string;
let receiver: http.Server;
let port: number;
/** What the receiver answers, by path, in order; the last status repeats. */
let script: Record<string, number[]> = {};
let received: Record<string, Received[]> = {};
const stops: (() => Promise<void>)[] = [];

const FAST: RetryPolicy = { firstDelayMs: 100, factor: 2, maxDelayMs: 1_000, maxAttempts: 4 };

beforeAll(async () => {
  db = await createTestDatabase();
  secret = newWebhookSecret();
  const owner = await db.pool.query<{ id: string }>(
    'INSERT INTO owners (name, webhook_secret) VALUES ($1, $2) RETURNING id',
    ['webhook owner', secret],
  );
  ownerId = owner.rows[0]?.id as string;
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const seen = received[path] ?? [];
      received[path] = seen;
      seen.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const statuses = script[path] ?? [200];
      const status = statuses[Math.min(seen.length - 1, statuses.length - 1)] as number;
      if (status === 0) return; // never answer
      response
        .writeHead(status, status === 302 ? { location: '/elsewhere' } : {})
        .end(`answer ${seen.length}`);
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  port = (receiver.address() as AddressInfo).port;
});

afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
  script = {};
  received = {};
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((done) => receiver.close(done));
  await db.drop();
});

function dispatch(options: Partial<WebhookDispatcherOptions> = {}) {
  const controller = new AbortController();
  const dispatcher = startWebhookDispatcher({
    pool: db.pool,
    signal: controller.signal,
    allowPrivate: true,
    retry: FAST,
    pollMs: 50,
    ...options,
  });
  stops.push(async () => {
    controller.abort();
    await dispatcher.stopped;
  });
}

/** A finished task and its webhook to the receiver's `path`, written in one transaction as the worker does. */
function finishTaskWithWebhook(path: string, body: unknown): Promise<string> {
  return finishTaskWithWebhookTo(`http://127.0.0.1:${port}${path}`, body);
}

async function finishTaskWithWebhookTo(url: string, body: unknown): Promise<string> {
  return inTransaction(db.pool, async (client) => {
    const task = await client.query<{ id: string }>(
      `INSERT INTO tasks (owner_id, endpoint, kind, input, state, result)
       VALUES ($1, '/sd/text2image/v1', 'generation', '{}', 'succeeded', '{}') RETURNING id`,
      [ownerId],
    );
    const taskId = task.rows[0]?.id as string;
    await enqueueWebhook(client, { ownerId, taskId, url, body });
    return taskId;
  });
}

async function deliveryOf(taskId: string) {
  const result = await db.pool.query<{
    id: string;
    state: string;
    attempts: number;
    last_error: string | null;
  }>('SELECT id, state, attempts, last_error FROM webhook_deliveries WHERE task_id = $1', [taskId]);
  return result.rows[0];
}

async function attemptsOf(taskId: string) {
  const result = await db.pool.query<{ attempt: number; status_code: number | null; error: string | null }>(
    `SELECT a.attempt, a.status_code, a.error FROM webhook_attempts a
     JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.task_id = $1 ORDER BY a.attempt`,
    [taskId],
  );
  return result.rows;
}

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((done) => setTimeout(done, 20));
  }
}

describe('webhook delivery', () => {
  it('delivers to a receiver that fails first, with signatures the standardwebhooks library verifies', async () => {
    script['/hook'] = [500, 503, 200];
    const body = { status: 'SUCCESS', download_urls: ['http://localhost:8000/files/abc/0.png'], image: null };
    const taskId = await finishTaskWithWebhook('/hook', body);
    dispatch();
    await until(async () => (await deliveryOf(taskId))?.state === 'delivered');

    const seen = received['/hook'] ?? [];
    expect(seen).toHaveLength(3);
    const verifier = new Webhook(secret);
    for (const request of seen) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(verifier.verify(request.body, request.headers as Record<string, string>)).toEqual(body);
    }
    // One message id across retries, so the receiver can drop duplicates.
    expect(new Set(seen.map((r) => r.headers['webhook-id'])).size).toBe(1);
    // Backoff: 100 ms after the first failure, 200 ms after the second.
    expect((seen[1] as Received).at - (seen[0] as Received).at).toBeGreaterThanOrEqual(90);
    expect((seen[2] as Received).at - (seen[1] as Received).at).toBeGreaterThanOrEqual(190);
    expect(await attemptsOf(taskId)).toEqual([
      { attempt: 1, status_code: 500, error: 'receiver answered HTTP 500' },
      { attempt: 2, status_code: 503, error: 'receiver answered HTTP 503' },
      { attempt: 3, status_code: 200, error: null },
    ]);
  });

  it('rejects a tampered body when verified', async () => {
    const taskId = await finishTaskWithWebhook('/tamper', { status: 'FAILURE', error: 'engine error' });
    dispatch();
    await until(async () => (await deliveryOf(taskId))?.state === 'delivered');
    const request = received['/tamper']?.[0] as Received;
    const forged = request.body.replace('FAILURE', 'SUCCESS');
    expect(() => new Webhook(secret).verify(forged, request.headers as Record<string, string>)).toThrow();
  });

  it('writes nothing when the finishing transaction rolls back', async () => {
    const before = await db.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries');
    await expect(
      inTransaction(db.pool, async (client) => {
        await enqueueWebhook(client, {
          ownerId,
          taskId: (
            await client.query<{ id: string }>(
              `INSERT INTO tasks (owner_id, endpoint, kind, input) VALUES ($1, '/sd/text2image/v1', 'generation', '{}')
             RETURNING id`,
              [ownerId],
            )
          ).rows[0]?.id as string,
          url: `http://127.0.0.1:${port}/rolled-back`,
          body: { status: 'SUCCESS' },
        });
        throw new Error('the task could not be finished');
      }),
    ).rejects.toThrow('could not be finished');
    const after = await db.pool.query('SELECT count(*)::int AS n FROM webhook_deliveries');
    expect(after.rows[0]).toEqual(before.rows[0]);
  });

  it('gives up after the last attempt and records every one', async () => {
    script['/down'] = [503];
    const taskId = await finishTaskWithWebhook('/down', { status: 'SUCCESS' });
    dispatch();
    await until(async () => (await deliveryOf(taskId))?.state === 'failed');
    expect(received['/down']).toHaveLength(FAST.maxAttempts);
    const attempts = await attemptsOf(taskId);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    expect(attempts.every((a) => a.status_code === 503)).toBe(true);
  });

  it('fails a receiver at a private address after one attempt, recording why, with retries left', async () => {
    const taskId = await finishTaskWithWebhook('/private', { status: 'SUCCESS' });
    const metrics = new Metrics();
    dispatch({ allowPrivate: false, metrics });
    await until(async () => (await deliveryOf(taskId))?.state === 'failed');
    expect(received['/private']).toBeUndefined();
    expect(await attemptsOf(taskId)).toEqual([
      { attempt: 1, status_code: null, error: 'address 127.0.0.1 is not public (loopback)' },
    ]);
    expect(await deliveryOf(taskId)).toMatchObject({
      attempts: 1,
      last_error: 'address 127.0.0.1 is not public (loopback)',
    });
    const outcomes = (await metrics.webhookAttempts.get()).values.map((v) => [v.labels.outcome, v.value]);
    expect(outcomes).toEqual([['failed', 1]]);
  });

  it('fails at once every URL the guard refuses for good, each with its reason', async () => {
    const refused = {
      'http://10.1.2.3/hook': 'address 10.1.2.3 is not public (private)',
      'http://hooks.internal.example/hook':
        'address 192.168.1.5 of hooks.internal.example is not public (private)',
      'http://[fe80::1]/hook': 'address fe80::1 is not public (linkLocal)',
      'ftp://hooks.example.com/hook': 'scheme ftp is not allowed (http and https only)',
      'http://user:secret@hooks.example.com/hook': 'URLs with credentials are not allowed',
      'not a url': 'is not a valid URL',
    };
    const taskIds = await Promise.all(
      Object.keys(refused).map((url) => finishTaskWithWebhookTo(url, { status: 'SUCCESS' })),
    );
    dispatch({ allowPrivate: false, resolve: async () => [{ address: '192.168.1.5', family: 4 }] });
    for (const [n, reason] of Object.values(refused).entries()) {
      const taskId = taskIds[n] as string;
      await until(async () => (await deliveryOf(taskId))?.state === 'failed');
      expect(await attemptsOf(taskId)).toEqual([{ attempt: 1, status_code: null, error: reason }]);
    }
  });

  it('stops at once when the receiver answers 410 Gone', async () => {
    script['/gone'] = [410];
    const taskId = await finishTaskWithWebhook('/gone', { status: 'SUCCESS' });
    dispatch();
    await until(async () => (await deliveryOf(taskId))?.state === 'failed');
    expect(received['/gone']).toHaveLength(1);
    expect(await attemptsOf(taskId)).toEqual([
      { attempt: 1, status_code: 410, error: 'receiver answered HTTP 410' },
    ]);
  });

  it('retries every other answer that is not 2xx: 4xx, 408, 429, 5xx', async () => {
    const statuses = [400, 401, 403, 404, 408, 409, 425, 429, 500, 502, 503, 504];
    for (const status of statuses) script[`/later/${status}`] = [status, 200];
    const taskIds = await Promise.all(
      statuses.map((status) => finishTaskWithWebhook(`/later/${status}`, { status: 'SUCCESS' })),
    );
    dispatch();
    for (const [n, status] of statuses.entries()) {
      const taskId = taskIds[n] as string;
      await until(async () => (await deliveryOf(taskId))?.state === 'delivered');
      expect(await attemptsOf(taskId)).toEqual([
        { attempt: 1, status_code: status, error: `receiver answered HTTP ${status}` },
        { attempt: 2, status_code: 200, error: null },
      ]);
    }
  });

  it('retries a refused connection and a failed DNS lookup', async () => {
    const closed = http.createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    const refusedTask = await finishTaskWithWebhookTo(`http://127.0.0.1:${closedPort}/hook`, {
      status: 'SUCCESS',
    });
    let lookups = 0;
    const dnsTask = await finishTaskWithWebhookTo(`http://flaky.example:${port}/dns`, { status: 'SUCCESS' });
    dispatch({
      resolve: async () => {
        if (++lookups === 1) throw Object.assign(new Error('queryA EAI_AGAIN'), { code: 'EAI_AGAIN' });
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    await until(async () => (await deliveryOf(dnsTask))?.state === 'delivered');
    expect(await attemptsOf(dnsTask)).toEqual([
      { attempt: 1, status_code: null, error: 'host flaky.example could not be resolved' },
      { attempt: 2, status_code: 200, error: null },
    ]);
    await until(async () => (await deliveryOf(refusedTask))?.state === 'failed');
    const attempts = await attemptsOf(refusedTask);
    expect(attempts).toHaveLength(FAST.maxAttempts);
    expect(attempts.every((a) => a.error === 'request failed: ECONNREFUSED')).toBe(true);
  });

  it('does not follow a redirect from the receiver', async () => {
    script['/moved'] = [302];
    const taskId = await finishTaskWithWebhook('/moved', { status: 'SUCCESS' });
    dispatch({ retry: { ...FAST, maxAttempts: 1 } });
    await until(async () => (await deliveryOf(taskId))?.state === 'failed');
    expect(received['/elsewhere']).toBeUndefined();
    expect((await deliveryOf(taskId))?.last_error).toBe('receiver answered HTTP 302');
  });

  it('times out a receiver that never answers', async () => {
    script['/silent'] = [0];
    const taskId = await finishTaskWithWebhook('/silent', { status: 'SUCCESS' });
    dispatch({ timeoutMs: 300, retry: { ...FAST, maxAttempts: 1 } });
    await until(async () => (await deliveryOf(taskId))?.state === 'failed');
    expect((await deliveryOf(taskId))?.last_error).toBe('timed out after 300 ms');
  });

  it('picks up a new delivery at once through NOTIFY, without waiting for the poll', async () => {
    dispatch({ pollMs: 60_000 });
    await new Promise((done) => setTimeout(done, 200)); // let it LISTEN and fall asleep
    const started = Date.now();
    const taskId = await finishTaskWithWebhook('/notify', { status: 'SUCCESS' });
    await until(async () => (await deliveryOf(taskId))?.state === 'delivered', 5_000);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('shares the outbox between two dispatchers without delivering twice', async () => {
    const taskIds = await Promise.all(
      Array.from({ length: 20 }, (_, n) => finishTaskWithWebhook(`/shared/${n}`, { status: 'SUCCESS', n })),
    );
    dispatch();
    dispatch();
    await until(async () => {
      const rows = await db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE task_id = ANY($1) AND state = 'delivered'`,
        [taskIds],
      );
      return rows.rows[0]?.n === taskIds.length;
    });
    for (let n = 0; n < 20; n++) expect(received[`/shared/${n}`]).toHaveLength(1);
  });
});

describe('the retry schedule', () => {
  it('backs off exponentially and keeps trying for at least 24 hours', () => {
    const delays = Array.from({ length: DEFAULT_RETRY_POLICY.maxAttempts - 1 }, (_, i) =>
      retryDelayMs(DEFAULT_RETRY_POLICY, i + 1),
    );
    expect(delays.slice(0, 4)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, DEFAULT_RETRY_POLICY.maxAttempts)).toBeNull();
    expect(retrySpanMs(DEFAULT_RETRY_POLICY)).toBeGreaterThanOrEqual(24 * 60 * 60 * 1000);
  });
});
