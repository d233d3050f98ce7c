import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startWebhookDispatcher } from '@imagegen/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  createClient,
  type ImagegenClient,
  verifyWebhook,
  type WebhookEventBodyOf,
} from '../src/index.ts';
import { imagegen } from './support/imagegen-command.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

/**
 * Webhook events, deliveries and usage through the SDK and the `imagegen` command, against the
 * real API (sandbox engine with simulated work and progress) and the real dispatcher.
 */

const T2I = '/sd/text2image/v1';
const small = { prompt: 'a lighthouse', negative_prompt: '', width: 64, height: 64 } as const;

let api: TestApi;
let client: ImagegenClient;
let receiver: Server;
let receiverUrl: string;
const bodies: { path: string; headers: Record<string, string>; body: string }[] = [];
const stop = new AbortController();
let dispatcher: { stopped: Promise<void> };
let env: Record<string, string>;

beforeAll(async () => {
  api = await startTestApi({ webhooks: true, delayMs: 1200 });
  client = createClient({ apiKey: api.key, baseUrl: api.url });
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push({
        path: request.url ?? '',
        headers: request.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  dispatcher = startWebhookDispatcher({
    pool: api.db.pool,
    signal: stop.signal,
    allowPrivate: true,
    pollMs: 50,
  });
  env = { IMAGEGEN_API_KEY: api.key, IMAGEGEN_BASE_URL: api.url, XDG_CONFIG_HOME: '/nonexistent' };
});

afterAll(async () => {
  stop.abort();
  await dispatcher?.stopped;
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await api?.close();
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('webhook events and deliveries through the SDK', () => {
  it('sends the events asked for, lists them with their attempts, and redelivers one', {
    timeout: 30_000,
  }, async () => {
    const { id } = await client.submit(T2I, {
      ...small,
      samples: 2,
      webhook: `${receiverUrl}/sdk`,
      webhook_events_filter: ['start', 'progress', 'completed'],
    });
    await client.wait(T2I, id);
    const list = await until(
      () => client.deliveries({ task_id: id, limit: 100 }),
      (page) => page.deliveries.length > 0 && page.deliveries.every((d) => d.status === 'delivered'),
    );
    const events = list.deliveries.map((delivery) => delivery.event).reverse();
    expect(events[0]).toBe('start');
    expect(events.at(-1)).toBe('completed');
    expect(events).toContain('progress');
    const { secret } = await client.get('/webhook_secret/v1');
    const first = bodies.find((call) => call.path === '/sdk')!;
    const start = await verifyWebhook<WebhookEventBodyOf<typeof T2I>>({
      secret,
      headers: first.headers,
      body: first.body,
    });
    expect(start).toEqual({ status: 'PENDING', id, path: T2I, event: 'start' });

    const completed = list.deliveries[0]!;
    const again = await client.redeliver(completed.id);
    expect(again).toMatchObject({ id: completed.id, status: 'pending' });
    const after = await until(
      () => client.deliveries({ task_id: id, limit: 1 }),
      (page) => page.deliveries[0]!.attempts.length === 2,
    );
    expect(after.deliveries[0]!.attempts.map((attempt) => attempt.attempt)).toEqual([1, 2]);
    await expect(client.redeliver('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(ApiError);
  });

  it('answers usage by day and pipeline', { timeout: 20_000 }, async () => {
    const today = new Date().toISOString().slice(0, 10);
    const report = await client.usage({ from: today, to: today });
    const row = report.rows.find((r) => r.pipeline === T2I);
    expect(row).toMatchObject({ day: today, failed: 0 });
    expect(row!.tasks).toBe(row!.succeeded);
    expect(row!.images).toBeGreaterThanOrEqual(2);
    expect(row!.pixels).toBe(row!.images * 64 * 64);
  });
});

describe('imagegen usage and webhook deliveries', () => {
  it('runs with --events, lists the calls and the usage', { timeout: 240_000 }, async () => {
    const submit = ['run', 'sd/text2image', '--prompt', 'x', '--negative-prompt', '', '--no-wait'];
    const webhook = ['--webhook', `${receiverUrl}/cli`, '--events', 'start,completed'];
    const run = await imagegen([...submit, ...webhook], { env });
    expect(run.code, run.stderr).toBe(0);
    const id = run.stdout.trim();
    await client.wait(T2I, id);
    await until(
      () => client.deliveries({ task_id: id }),
      (page) => page.deliveries.length === 2 && page.deliveries.every((d) => d.status === 'delivered'),
    );
    const listed = await imagegen(['webhook', 'deliveries', '--task-id', id, '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.event)).toEqual(['completed', 'start']);

    const usage = await imagegen(['usage'], { env });
    expect(usage.code, usage.stderr).toBe(0);
    expect(usage.stdout).toMatch(/^DAY\s+PIPELINE\s+TASKS/m);
    expect(usage.stdout).toContain(T2I);

    const refused = await imagegen([...submit, '--events', 'start,finished'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--webhook-events-filter.1: value is not a valid enumeration member');
  });
});

// Type-only: the request types carry the field from the contract, its members checked.
export function typesOnly(typed: ImagegenClient) {
  void typed.submit(T2I, { ...small, webhook_events_filter: ['progress'] });
  // @ts-expect-error: not an event
  void typed.submit(T2I, { ...small, webhook_events_filter: ['finished'] });
}
