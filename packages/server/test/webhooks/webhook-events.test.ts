import { type Engine, EngineInputError, type EngineJob, type RunContext } from '@imagegen/engines';
import sharp from 'sharp';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observability/metrics.ts';
import { PROGRESS_EVENT_MS } from '../../src/tasks/webhook-events.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
import { type ReceivedCall, startWebhookReceiver } from '../support/webhook-receiver.ts';

const T2I = '/sd/text2image/v1';
/** How long a `slow` task reports progress, every TICK_MS. */
const SLOW_MS = 1_600;
const TICK_MS = 10;

/**
 * Draws `samples` plain images of the requested size; a prompt of `slow` first reports progress
 * every 10 ms for 1.6 s, one of `fail` is refused as bad input (a final failure).
 */
function tickingEngine(): Engine {
  return {
    name: 'ticking',
    pipelines: [T2I],
    async run(job: EngineJob, ctx: RunContext) {
      if (job.input.prompt === 'fail') throw new EngineInputError('prompt: refused by the test engine');
      if (job.input.prompt === 'slow') {
        const started = performance.now();
        while (performance.now() - started < SLOW_MS) {
          ctx.progress((performance.now() - started) / SLOW_MS);
          await new Promise((resolve) => setTimeout(resolve, TICK_MS));
        }
      }
      const width = job.input.width as number;
      const height = job.input.height as number;
      const images = [];
      for (let n = 0; n < (job.input.samples as number); n++) {
        const data = await sharp({ create: { width, height, channels: 3, background: '#204060' } })
          .png()
          .toBuffer();
        images.push({ data, contentType: 'image/png' as const, width, height });
      }
      return { images, meta: { model: 'test' } };
    },
  };
}

let api: ApiHarness;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let hookUrl: string;
let received: ReceivedCall[];
const metrics = new Metrics();

beforeAll(async () => {
  api = await startApiHarness({ engine: tickingEngine(), webhooks: true, metrics });
  receiver = await startWebhookReceiver(api.db.pool);
  hookUrl = receiver.url;
  received = receiver.received;
});

afterAll(async () => {
  await receiver.close();
  await api.close();
});

async function submit(body: Record<string, unknown>, key = api.alice.key): Promise<string> {
  const response = await api.request('POST', T2I, {
    key,
    json: { prompt: 'a lighthouse', negative_prompt: '', width: 64, height: 64, samples: 1, ...body },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return (response.body as { id: string }).id;
}

/** The calls received on `path`, once `count` of them came. */
async function calls(path: string, count: number): Promise<ReceivedCall[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const seen = received.filter((call) => call.path === path);
    if (seen.length >= count) return seen;
    if (Date.now() > deadline) throw new Error(`${path}: ${seen.length} of ${count} calls came`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function secretOf(key: string): Promise<string> {
  return ((await api.request('GET', '/webhook_secret/v1', { key })).body as { secret: string }).secret;
}

function verified(call: ReceivedCall, secret: string): Record<string, unknown> {
  return new Webhook(secret).verify(call.body, {
    'webhook-id': String(call.headers['webhook-id']),
    'webhook-timestamp': String(call.headers['webhook-timestamp']),
    'webhook-signature': String(call.headers['webhook-signature']),
  }) as Record<string, unknown>;
}

describe('webhook events', () => {
  it('calls start, throttled progress and completed in order, each signed, the last one unchanged', {
    timeout: 30_000,
  }, async () => {
    const id = await submit({
      prompt: 'slow',
      webhook: `${hookUrl}/all`,
      webhook_events_filter: ['start', 'progress', 'completed'],
    });
    const final = await api.settle(`${T2I}/status/${id}`, api.alice.key);
    // The completed call comes last; wait for it.
    const deadline = Date.now() + 15_000;
    while (!received.some((call) => call.path === '/all' && !('event' in JSON.parse(call.body)))) {
      if (Date.now() > deadline) throw new Error('no completed call');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const secret = await secretOf(api.alice.key);
    const bodies = (await calls('/all', 1)).map((call) => verified(call, secret));
    const events = bodies.map((body) => body.event ?? 'completed');
    expect(events[0]).toBe('start');
    expect(events.at(-1)).toBe('completed');
    expect(events.slice(1, -1).every((event) => event === 'progress')).toBe(true);
    expect(bodies[0]).toEqual({ status: 'PENDING', id, path: T2I, event: 'start' });
    // The final body is today's: the status answer, then id and path, and nothing else.
    expect(bodies.at(-1)).toEqual({ ...final, id, path: T2I });
    const progress = bodies.slice(1, -1);
    // 1.6 s of reports every 10 ms: a few calls, never more than one per 500 ms.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.length).toBeLessThanOrEqual(Math.floor(SLOW_MS / PROGRESS_EVENT_MS) + 1);
    const fractions = progress.map((body) => body.progress as number);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    for (const body of progress)
      expect(Object.keys(body)).toEqual(['status', 'progress', 'id', 'path', 'event']);
    // The deliveries' own times show the spacing. A row's time is its insert's, which a busy
    // machine can delay by some hundreds of ms (then the next gap looks shorter): half the interval
    // is still far from the 10 ms between reports (seen: 357 ms under a loaded PostgreSQL pass).
    const listed = await api.request('GET', `/webhooks/v1/deliveries?task_id=${id}&limit=100`);
    const deliveries = (listed.body as { deliveries: { event: string; created_at: string }[] }).deliveries;
    const times = deliveries
      .filter((delivery) => delivery.event === 'progress')
      .map((delivery) => Date.parse(delivery.created_at))
      .sort((a, b) => a - b);
    expect(times).toHaveLength(progress.length);
    for (let n = 1; n < times.length; n++)
      expect(times[n]! - times[n - 1]!).toBeGreaterThanOrEqual(PROGRESS_EVENT_MS / 2);
  });

  it('calls only at the end for a client that sends no filter, with the same body as before', {
    timeout: 20_000,
  }, async () => {
    const id = await submit({ webhook: `${hookUrl}/plain` });
    const final = await api.settle(`${T2I}/status/${id}`, api.alice.key);
    const [call] = await calls('/plain', 1);
    expect(call!.body).toBe(JSON.stringify({ ...final, id, path: T2I }));
    const listed = await api.request('GET', `/webhooks/v1/deliveries?task_id=${id}`);
    expect((listed.body as { deliveries: { event: string }[] }).deliveries.map((d) => d.event)).toEqual([
      'completed',
    ]);
  });

  it('calls only the events chosen', { timeout: 20_000 }, async () => {
    const id = await submit({ webhook: `${hookUrl}/start-only`, webhook_events_filter: ['start'] });
    await api.settle(`${T2I}/status/${id}`, api.alice.key);
    await calls('/start-only', 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const bodies = received
      .filter((call) => call.path === '/start-only')
      .map((call) => JSON.parse(call.body));
    expect(bodies).toEqual([{ status: 'PENDING', id, path: T2I, event: 'start' }]);
  });

  it('refuses a filter that is not a list of events, as pydantic does', async () => {
    const member = await api.request('POST', T2I, {
      json: { prompt: 'x', negative_prompt: '', webhook_events_filter: ['start', 'finished'] },
    });
    expect(member.status).toBe(422);
    expect(member.body).toEqual({
      detail: [
        {
          loc: ['body', 'webhook_events_filter', 1],
          msg: "value is not a valid enumeration member; permitted: 'start', 'progress', 'completed'",
          type: 'type_error.enum',
          ctx: { enum_values: ['start', 'progress', 'completed'] },
        },
      ],
    });
    const notList = await api.request('POST', T2I, {
      json: { prompt: 'x', negative_prompt: '', webhook_events_filter: 7 },
    });
    expect(notList.status).toBe(422);
    expect(notList.body).toEqual({
      detail: [
        { loc: ['body', 'webhook_events_filter'], msg: 'value is not a valid list', type: 'type_error.list' },
      ],
    });
  });
});

describe('webhook deliveries', () => {
  it('lists a delivery with its attempts, and redelivers it as a new attempt under the same id', {
    timeout: 20_000,
  }, async () => {
    const id = await submit({ webhook: `${hookUrl}/again` });
    await api.settle(`${T2I}/status/${id}`, api.alice.key);
    const [first] = await calls('/again', 1);
    const listed = await api.request('GET', `/webhooks/v1/deliveries?task_id=${id}`);
    expect(listed.status).toBe(200);
    let [delivery] = (listed.body as { deliveries: Record<string, unknown>[] }).deliveries;
    // The dispatcher records the attempt just after the receiver answered.
    const deadline = Date.now() + 5_000;
    while (delivery!.status === 'pending' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      [delivery] = (
        (await api.request('GET', `/webhooks/v1/deliveries?task_id=${id}`)).body as {
          deliveries: Record<string, unknown>[];
        }
      ).deliveries;
    }
    expect(delivery).toMatchObject({ task_id: id, event: 'completed', status: 'delivered' });
    expect(delivery!.attempts).toEqual([
      {
        attempt: 1,
        started_at: expect.any(String),
        duration_ms: expect.any(Number),
        status_code: 204,
        error: null,
      },
    ]);

    const again = await api.request('POST', `/webhooks/v1/deliveries/${delivery!.id}/redeliver`);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    // The delivery as it stands once due again: pending, or already delivered when the
    // dispatcher, woken at once, was quicker than the read that makes this answer.
    expect(again.body).toMatchObject({ id: delivery!.id });
    expect(['pending', 'delivered']).toContain((again.body as { status: string }).status);
    const [, second] = await calls('/again', 2);
    const secret = await secretOf(api.alice.key);
    expect(verified(second!, secret)).toEqual(verified(first!, secret));
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    const until = Date.now() + 5_000;
    let attempts: { attempt: number; status_code: number }[] = [];
    while (attempts.length < 2 && Date.now() < until) {
      const read = await api.request('GET', `/webhooks/v1/deliveries?task_id=${id}`);
      attempts = (read.body as { deliveries: { attempts: typeof attempts }[] }).deliveries[0]!.attempts;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(attempts.map((attempt) => [attempt.attempt, attempt.status_code])).toEqual([
      [1, 204],
      [2, 204],
    ]);
  });

  it("keeps each owner's deliveries to that owner: another's is a 404 and lists nothing", {
    timeout: 20_000,
  }, async () => {
    const id = await submit({ webhook: `${hookUrl}/mine` });
    await api.settle(`${T2I}/status/${id}`, api.alice.key);
    await calls('/mine', 1);
    const mine = await api.request('GET', `/webhooks/v1/deliveries?task_id=${id}`);
    const [delivery] = (mine.body as { deliveries: { id: string }[] }).deliveries;
    expect(delivery).toBeDefined();
    const theirs = await api.request('GET', `/webhooks/v1/deliveries?task_id=${id}`, { key: api.bob.key });
    expect(theirs.body).toEqual({ deliveries: [], next_cursor: null });
    const all = await api.request('GET', '/webhooks/v1/deliveries?limit=100', { key: api.bob.key });
    expect(all.body).toEqual({ deliveries: [], next_cursor: null });
    const redeliver = await api.request('POST', `/webhooks/v1/deliveries/${delivery!.id}/redeliver`, {
      key: api.bob.key,
    });
    expect(redeliver.status).toBe(404);
    expect((await api.request('POST', '/webhooks/v1/deliveries/not-an-id/redeliver')).status).toBe(404);
    const badLimit = await api.request('GET', '/webhooks/v1/deliveries?limit=0');
    expect(badLimit.status).toBe(422);
  });
});

describe('usage records', () => {
  it('sums the tasks that ran by day and pipeline, for their owner only, and counts them in /metrics', {
    timeout: 30_000,
  }, async () => {
    const owner = api.enterprise;
    const ids = [
      await submit({ width: 64, height: 32, samples: 2 }, owner.key),
      await submit({ width: 48, height: 48, samples: 1 }, owner.key),
      await submit({ prompt: 'fail' }, owner.key),
    ];
    for (const id of ids) await api.settle(`${T2I}/status/${id}`, owner.key);
    const today = new Date().toISOString().slice(0, 10);
    const report = await api.request('GET', `/usage/v1?from=${today}&to=${today}`, { key: owner.key });
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    const body = report.body as { from: string; to: string; rows: Record<string, unknown>[] };
    expect(body.from).toBe(today);
    expect(body.to).toBe(today);
    expect(body.rows).toEqual([
      {
        day: today,
        pipeline: T2I,
        tasks: 3,
        succeeded: 2,
        failed: 1,
        images: 3,
        pixels: 2 * 64 * 32 + 48 * 48,
        run_seconds: expect.any(Number),
        queue_seconds: expect.any(Number),
      },
    ]);
    const row = body.rows[0] as { run_seconds: number; queue_seconds: number };
    expect(row.run_seconds).toBeGreaterThanOrEqual(0);
    expect(row.queue_seconds).toBeGreaterThanOrEqual(0);
    // The default range ends today; another owner reads none of it.
    const bob = await api.request('GET', '/usage/v1', { key: api.bob.key });
    expect((bob.body as { rows: unknown[] }).rows).toEqual([]);
    const exposition = await metrics.registry.metrics();
    expect(exposition).toContain('imagegen_task_images_total{pipeline="/sd/text2image/v1",engine="ticking"}');
    expect(exposition).not.toMatch(/imagegen_task_\w+\{[^}]*owner/);
  });

  it('refuses a day that is not one, and a range that runs backwards or too long', async () => {
    const bad = await api.request('GET', '/usage/v1?from=2026-02-30');
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({
      detail: [{ loc: ['query', 'from'], msg: 'invalid date format', type: 'value_error.date' }],
    });
    const backwards = await api.request('GET', '/usage/v1?from=2026-03-02&to=2026-03-01');
    expect(backwards.status).toBe(422);
    const long = await api.request('GET', '/usage/v1?from=2024-01-01&to=2026-01-01');
    expect(long.status).toBe(422);
  });
});
