import { sandboxEngineModule } from '@imagegen/engine-sandbox';
import { setUpEngines } from '@imagegen/engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { enqueueWebhook } from '../../src/webhooks/webhook-outbox.ts';
import { type LoopbackApi, startLoopbackApi } from '../support/loopback.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const T2I = '/sd/text2image/v1';
const REFUSAL = {
  loc: ['header', 'cancel-after'],
  msg: 'Cancel-After must be a duration from 1s to 24h: whole numbers with the units h, m, s, ms in that order, such as 30s, 5m, 1h30m or 1s500ms',
  type: 'value_error.cancel_after',
};

/**
 * Cancel-After over the real API, on the sandbox engine as `npm start` sets it up, drawing for
 * SANDBOX_DELAY_MS: a running task is stopped at its deadline, a queued one never runs, a bad
 * value is a 422 at the header.
 */
describe('Cancel-After', () => {
  let db: TestDatabase;
  let api: LoopbackApi;
  let key: string;
  const engines = setUpEngines([sandboxEngineModule], {
    IMAGEGEN_ENGINES: 'sandbox',
    SANDBOX_DELAY_MS: '10000',
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    key = (await createOwner(db.pool, { name: 'deadlines', plan: 'UNLIMITED' })).apiKey;
    api = await startLoopbackApi({
      pool: db.pool,
      engines: (await engines).registry,
      withWorker: false,
      enqueueWebhook,
      worker: { pollMs: 100, leaseMs: 1_000, drainMs: 100 },
    });
  });
  afterAll(async () => {
    await api?.close();
    await (await engines).registry.close();
    await db?.drop();
  });

  async function submit(headers: Record<string, string>, prompt: string) {
    const response = await fetch(`${api.url}${T2I}`, {
      method: 'POST',
      headers: { 'API-Key': key, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({
        prompt,
        negative_prompt: '',
        width: 64,
        height: 64,
        webhook: 'https://hooks.example/d',
      }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  async function finalStatus(id: string): Promise<Record<string, unknown>> {
    for (const started = Date.now(); Date.now() - started < 10_000; ) {
      const body = (await (
        await fetch(`${api.url}${T2I}/status/${id}`, { headers: { 'API-Key': key } })
      ).json()) as {
        status: string;
      };
      if (body.status !== 'PENDING') return body;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`task ${id} did not end`);
  }

  it('refuses a malformed or out-of-bound duration with a 422 at the header, queueing nothing', async () => {
    for (const value of [
      '',
      '30',
      '1.5s',
      '30S',
      '5m30m',
      '30s5m',
      'm',
      '-1s',
      '999ms',
      '0s',
      '24h1s',
      '25h',
      '1 h',
      `${'0'.repeat(40)}1s`,
    ]) {
      const prompt = `refused ${value}`;
      const answer = await submit({ 'Cancel-After': value }, prompt);
      expect([answer.status, answer.body], value).toEqual([422, { detail: [REFUSAL] }]);
      const { rows } = await db.pool.query("SELECT 1 FROM tasks WHERE input->>'prompt' = $1", [prompt]);
      expect(rows).toEqual([]);
    }
  });

  it('changes nothing for a submission without the header', async () => {
    const { status, body } = await submit({}, 'no deadline');
    expect(status).toBe(200);
    const { rows } = await db.pool.query('SELECT deadline_at, cancel_after FROM tasks WHERE id = $1', [
      body.id,
    ]);
    expect(rows).toEqual([{ deadline_at: null, cancel_after: null }]);
  });

  it('takes every form of the grammar within the bounds, and stores the deadline', async () => {
    const forms: [string, number][] = [
      ['1s', 1_000],
      ['30s', 30_000],
      ['5m', 300_000],
      ['1h30m', 5_400_000],
      ['1s500ms', 1_500],
      ['2m15s', 135_000],
      ['24h', 86_400_000],
      ['1000ms', 1_000],
    ];
    for (const [value, ms] of forms) {
      const answer = await submit({ 'Cancel-After': value }, `accepted ${value}`);
      expect(answer.status, value).toBe(200);
      const { rows } = await db.pool.query<{ ms: number; cancel_after: string }>(
        'SELECT extract(epoch FROM deadline_at - created_at) * 1000 AS ms, cancel_after FROM tasks WHERE id = $1',
        [answer.body.id],
      );
      expect([Number(rows[0]!.ms), rows[0]!.cancel_after], value).toEqual([ms, value]);
    }
    await db.pool.query("UPDATE tasks SET state = 'failed', finished_at = now() WHERE state = 'queued'");
  });

  it('fails a queued task at its deadline without running it; the status and the webhook say why', async () => {
    const { body } = await submit({ 'Cancel-After': '1s' }, 'queued past its deadline');
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    api.addWorker();
    const error = "the task's deadline (Cancel-After: 1s) passed";
    expect(await finalStatus(body.id as string)).toEqual({ status: 'FAILURE', error });
    const { rows } = await db.pool.query<{ started_at: Date | null; attempts: number; payload: string }>(
      `SELECT t.started_at, t.attempts, w.payload FROM tasks t JOIN webhook_deliveries w ON w.task_id = t.id
        WHERE t.id = $1`,
      [body.id],
    );
    expect(rows.map((row) => [row.started_at, row.attempts, JSON.parse(row.payload)])).toEqual([
      [null, 0, { status: 'FAILURE', error, id: body.id, path: T2I }],
    ]);
  });

  it('stops a running sandbox task at its deadline and fails it', async () => {
    const started = Date.now();
    const { body } = await submit({ 'Cancel-After': '2s' }, 'running past its deadline');
    const final = await finalStatus(body.id as string);
    const took = Date.now() - started;
    expect(final).toEqual({ status: 'FAILURE', error: "the task's deadline (Cancel-After: 2s) passed" });
    // The sandbox would have drawn for 10 s.
    expect(took).toBeGreaterThanOrEqual(1_900);
    expect(took).toBeLessThan(6_000);
    const { rows } = await db.pool.query<{ attempts: number; started: boolean }>(
      'SELECT attempts, started_at IS NOT NULL AS started FROM tasks WHERE id = $1',
      [body.id],
    );
    expect(rows).toEqual([{ attempts: 1, started: true }]);
  });
});
