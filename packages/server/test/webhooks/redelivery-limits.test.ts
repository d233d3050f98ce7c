import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTEMPTS_KEPT, finishAttempt } from '../../src/webhooks/sql/finishAttempt.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const T2I = '/sd/text2image/v1';
const PER_DELIVERY = 3;
const PER_MINUTE = 5;

interface Delivery {
  id: string;
  task_id: string;
  status: string;
  attempts: { attempt: number }[];
}

/**
 * What one key may make the dispatcher do: one redelivery of a delivery in flight at a time, a
 * few a day of each delivery and a few a minute of all of an owner's (429 with Retry-After past
 * them), its attempts pruned to the newest, and its listing read a bounded page at a time.
 */
let api: ApiHarness;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
/** While set, the receiver holds each call until it resolves. */
let holding: Promise<void> | null = null;

beforeAll(async () => {
  api = await startApiHarness({
    webhooks: true,
    redeliveryLimits: { perDelivery: PER_DELIVERY, perMinute: PER_MINUTE },
  });
  receiver = await startWebhookReceiver(api.db.pool, { hold: () => holding });
});

afterAll(async () => {
  await receiver.close();
  await api.close();
});

/** A task with a webhook, run and delivered; answers its delivery. */
async function deliveredTask(key = api.alice.key): Promise<Delivery> {
  const submitted = await api.request('POST', T2I, {
    key,
    json: { prompt: 'p', negative_prompt: '', width: 64, height: 64, webhook: `${receiver.url}/hook` },
  });
  const id = (submitted.body as { id: string }).id;
  await api.settle(`${T2I}/status/${id}`, key);
  return settledDelivery(`task_id=${id}`, key);
}

/** The first delivery the query lists, once it is no longer pending. */
async function settledDelivery(query: string, key = api.alice.key): Promise<Delivery> {
  for (const deadline = Date.now() + 15_000; ; ) {
    const listed = await api.request('GET', `/webhooks/v1/deliveries?${query}`, { key });
    const [delivery] = (listed.body as { deliveries: Delivery[] }).deliveries;
    if (delivery && delivery.status !== 'pending') return delivery;
    if (Date.now() > deadline) throw new Error('the delivery stayed pending');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const redeliver = (id: string, key = api.alice.key) =>
  api.request('POST', `/webhooks/v1/deliveries/${id}/redeliver`, { key });

describe('redelivering a webhook', () => {
  it('sends one redelivery of a delivery at a time: another while it is in flight answers 409', async () => {
    const delivery = await deliveredTask(api.bob.key);
    let release: () => void = () => {};
    holding = new Promise((resolve) => {
      release = resolve;
    });
    try {
      expect((await redeliver(delivery.id, api.bob.key)).status).toBe(200);
      const again = await redeliver(delivery.id, api.bob.key);
      expect([again.status, again.body]).toEqual([
        409,
        { detail: 'The delivery is still pending: its next attempt is already planned' },
      ]);
    } finally {
      holding = null;
      release();
    }
    // Released, it is delivered again.
    expect((await settledDelivery(`task_id=${delivery.task_id}`, api.bob.key)).status).toBe('delivered');
  });

  it('allows a few redeliveries of one delivery a day, then answers 429 with the wait', async () => {
    const delivery = await deliveredTask(api.enterprise.key);
    for (let n = 0; n < PER_DELIVERY; n++) {
      expect((await redeliver(delivery.id, api.enterprise.key)).status).toBe(200);
      await settledDelivery(`task_id=${delivery.task_id}`, api.enterprise.key);
    }
    const refused = await redeliver(delivery.id, api.enterprise.key);
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    // The oldest of the day's redeliveries leaves the window a day after it was asked for.
    expect(wait).toBeGreaterThan(86_400 - 120);
    expect(wait).toBeLessThanOrEqual(86_400);
    expect(refused.body).toEqual({
      detail: `This delivery was redelivered as often as a day allows: retry after ${wait} s`,
    });
    const attempts = (await settledDelivery(`task_id=${delivery.task_id}`, api.enterprise.key)).attempts;
    expect(attempts.map((attempt) => attempt.attempt)).toEqual([1, 2, 3, 4]);
  });

  it("allows a few redeliveries of an owner's deliveries a minute, then answers 429 with the wait", async () => {
    const first = await deliveredTask();
    const second = await deliveredTask();
    for (let n = 0; n < PER_DELIVERY; n++) {
      expect((await redeliver(first.id)).status).toBe(200);
      await settledDelivery(`task_id=${first.task_id}`);
    }
    for (let n = PER_DELIVERY; n < PER_MINUTE; n++) {
      expect((await redeliver(second.id)).status).toBe(200);
      await settledDelivery(`task_id=${second.task_id}`);
    }
    const refused = await redeliver(second.id);
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(refused.body).toEqual({
      detail: `Too many redeliveries in the last minute: retry after ${wait} s`,
    });
    // Another owner's allowance is its own.
    const theirs = await deliveredTask(api.bob.key);
    expect((await redeliver(theirs.id, api.bob.key)).status).toBe(200);
  });

  it('keeps the newest attempts of a delivery, removing older ones as new ones are recorded', async () => {
    const delivery = await deliveredTask(api.bob.key);
    const pool = api.db.pool;
    for (let attempt = 2; attempt <= ATTEMPTS_KEPT + 15; attempt++) {
      await pool.query(`UPDATE webhook_deliveries SET attempts = $2, state = 'pending' WHERE id = $1`, [
        delivery.id,
        attempt,
      ]);
      await finishAttempt(pool, {
        deliveryId: delivery.id,
        ownerId: api.bob.ownerId,
        attempt,
        startedAt: new Date(),
        durationMs: 3,
        statusCode: 500,
        error: 'HTTP 500',
        responseExcerpt: null,
        next: { state: 'failed' },
      });
    }
    const { rows } = await pool.query<{ attempt: number }>(
      'SELECT attempt FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt',
      [delivery.id],
    );
    expect(rows.map((row) => row.attempt)).toEqual(Array.from({ length: ATTEMPTS_KEPT }, (_, n) => n + 16));
  });
});

describe('listing deliveries', () => {
  it('reads every delivery once, a page at a time, newest first', async () => {
    const owner = api.enterprise;
    for (let n = 0; n < 3; n++) await deliveredTask(owner.key);
    const all = (await api.request('GET', '/webhooks/v1/deliveries?limit=100', { key: owner.key })).body as {
      deliveries: Delivery[];
      next_cursor: string | null;
    };
    expect(all.next_cursor).toBeNull();
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const query: string = `limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = (await api.request('GET', `/webhooks/v1/deliveries?${query}`, { key: owner.key }))
        .body as {
        deliveries: Delivery[];
        next_cursor: string | null;
      };
      expect(page.deliveries.length).toBeLessThanOrEqual(2);
      seen.push(...page.deliveries.map((delivery) => delivery.id));
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(all.deliveries.map((delivery) => delivery.id));
    const bad = await api.request('GET', '/webhooks/v1/deliveries?cursor=nonsense', { key: owner.key });
    expect([bad.status, bad.body]).toEqual([
      422,
      {
        detail: [
          {
            loc: ['query', 'cursor'],
            msg: 'not a cursor of this listing: pass the next_cursor of a previous page',
            type: 'value_error.cursor',
          },
        ],
      },
    ]);
  });
});
