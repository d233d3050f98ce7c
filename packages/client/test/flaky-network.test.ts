import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/index.ts';
import { type FaultyProxy, startFaultyProxy } from './support/faulty-proxy.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

/**
 * A network that drops connections between the client and the real API: a retried submission
 * answers the task the first one created (one task, not two), and a cut status stream is picked up
 * where it stopped.
 */

let api: TestApi;
let proxy: FaultyProxy;
const prompt = { prompt: 'a lighthouse at dawn', negative_prompt: 'blurry', width: 64, height: 64 };

beforeAll(async () => {
  api = await startTestApi({ delayMs: 1000 });
  proxy = await startFaultyProxy(api.url);
});

afterAll(async () => {
  await proxy?.close();
  await api?.close();
});

describe('a dropped connection', () => {
  it('after the API queued a submission: the retry, with the same Idempotency-Key, answers that task', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: proxy.url, retryDelayMs: 50 });
    proxy.dropNextAnswer((request) => request.method === 'POST');
    const batch = `dropped-${Date.now()}`;
    const result = await client.run(
      '/sd/text2image/v1',
      { ...prompt, batch_id: batch },
      { timeoutMs: 30_000 },
    );
    expect(result.status).toBe('SUCCESS');

    const submissions = proxy.seen.filter((request) => request.method === 'POST');
    expect(submissions).toHaveLength(2);
    const keys = submissions.map((request) => request.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[1]).toBe(keys[0]);
    const { tasks } = await client.tasks({ batch_id: batch });
    expect(tasks).toHaveLength(1);
  });

  it('in the middle of a status stream: the client reconnects with Last-Event-ID and gets the rest', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: proxy.url });
    proxy.cutNextStreamAfterFirstEvent((request) => request.url.endsWith('/events'));
    const before = proxy.seen.length;
    const result = await client.run('/sd/text2image/v1', { ...prompt, samples: 2 }, { timeoutMs: 30_000 });
    expect(result.download_urls).toHaveLength(2);
    const streams = proxy.seen.slice(before).filter((request) => request.url.endsWith('/events'));
    expect(streams.length).toBeGreaterThanOrEqual(2);
    expect(streams[0]!.headers['last-event-id']).toBeUndefined();
    expect(streams[1]!.headers['last-event-id']).toMatch(/^\d+$/);
  });

  it('every submission carries its own new key', async () => {
    const client = createClient({ apiKey: api.key, baseUrl: proxy.url });
    const before = proxy.seen.length;
    await client.submit('/sd/text2image/v1', prompt);
    await client.submit('/sd/text2image/v1', prompt);
    const keys = proxy.seen
      .slice(before)
      .filter((request) => request.method === 'POST')
      .map((request) => request.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
  });
});
