import { CANCELLED_ERROR } from '@imagegen/contract';
import { describe, expect, it } from 'vitest';
import { claimTask } from '../../src/tasks/sql/claimTask.ts';
import { completeTask } from '../../src/tasks/sql/completeTask.ts';
import { heartbeatTask } from '../../src/tasks/sql/heartbeatTask.ts';
import { eventually } from '../support/fakes.ts';
import { gatedApi, uniqueName } from '../support/gated-engine.ts';

const T2I = '/sd/text2image/v1';
const CANCELLED = { status: 'FAILURE', error: CANCELLED_ERROR };
const WEBHOOK = 'https://hooks.example.com/imagegen';

/**
 * Cancelling over HTTP: `POST <path>/cancel/{task_id}` for a queued task, a running one (its
 * engine is aborted through its signal), a finished one (409), another owner's (404), a training;
 * and the races: a cancel while a worker claims the task, and a cancel as the task completes.
 */
describe('cancelling tasks over HTTP', () => {
  const gated = gatedApi({ webhooks: true });

  async function submit(prompt: string, extra: Record<string, unknown> = {}, key = gated.api.alice.key) {
    const response = await gated.api.request('POST', T2I, {
      key,
      json: { prompt, negative_prompt: '', width: 16, height: 16, webhook: WEBHOOK, ...extra },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as { id: string; download_urls?: string[] };
  }

  const cancel = (id: string, key = gated.api.alice.key, path = T2I) =>
    gated.api.request('POST', `${path}/cancel/${id}`, { key });
  const status = async (id: string) => (await gated.api.request('GET', `${T2I}/status/${id}`)).body;

  /** The webhook body of a task of T2I that ended with `status`: that status, then its id and path. */
  const webhookOf = (body: unknown, id: string) => ({ ...(body as object), id, path: T2I });

  /** The webhook bodies queued for the task, in order. */
  async function webhooks(taskId: string): Promise<unknown[]> {
    const { rows } = await gated.api.db.pool.query<{ payload: string }>(
      'SELECT payload FROM webhook_deliveries WHERE task_id = $1 ORDER BY created_at',
      [taskId],
    );
    return rows.map((row) => JSON.parse(row.payload));
  }

  async function imageRows(taskId: string): Promise<number> {
    const { rows } = await gated.api.db.pool.query('SELECT 1 FROM images WHERE task_id = $1', [taskId]);
    return rows.length;
  }

  /** Whether the gate's job ever reached the engine, judged after the queue moved past it. */
  const reachedEngine = (name: string) =>
    Promise.race([
      gated.engine.gate(name).started.then(() => true),
      new Promise((r) => setTimeout(r, 0, false)),
    ]);

  /** Occupies the shared pool's one worker slot until the returned function is called. */
  async function occupyWorker(): Promise<() => Promise<void>> {
    const name = `blocker-${uniqueName()}`;
    const { id } = await submit(`gate:${name}`);
    await gated.engine.gate(name).started;
    return async () => {
      gated.engine.gate(name).open();
      await gated.api.settle(`${T2I}/status/${id}`, gated.api.alice.key);
    };
  }

  it('cancels a queued task at once: FAILURE for good, its engine never runs it, one webhook', async () => {
    const release = await occupyWorker();
    const name = `queued-${uniqueName()}`;
    const { id } = await submit(`gate:${name}`);
    const response = await cancel(id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(CANCELLED);
    expect(await status(id)).toEqual(CANCELLED);
    await release();
    // A task submitted after it runs to the end: the queue has moved past the cancelled one.
    const after = await submit('after the cancel');
    expect((await gated.api.settle(`${T2I}/status/${after.id}`, gated.api.alice.key)).status).toBe('SUCCESS');
    expect(await reachedEngine(name)).toBe(false);
    expect(await status(id)).toEqual(CANCELLED);
    expect(await webhooks(id)).toEqual([webhookOf(CANCELLED, id)]);
  });

  it('aborts a running task through its engine signal within well under a second; its outputs are never served', async () => {
    const name = `running-${uniqueName()}`;
    const submitted = await submit(`gate:${name}`, { samples: 2, queued_image_urls: true });
    const gate = gated.engine.gate(name);
    await gate.started;
    gate.progress(0.5);
    const cancelledAt = Date.now();
    const response = await cancel(submitted.id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(CANCELLED);
    expect(await gate.settled).toBe('aborted');
    expect(gate.abortReason).toBe(CANCELLED_ERROR);
    expect(gate.settledAt! - cancelledAt).toBeLessThan(500);

    expect(await status(submitted.id)).toEqual(CANCELLED);
    expect(await imageRows(submitted.id)).toBe(0);
    for (const url of submitted.download_urls ?? []) expect((await fetch(url)).status).toBe(404);
    expect(await webhooks(submitted.id)).toEqual([webhookOf(CANCELLED, submitted.id)]);
    // The worker's slot is free again.
    const next = await submit('next');
    expect((await gated.api.settle(`${T2I}/status/${next.id}`, gated.api.alice.key)).status).toBe('SUCCESS');
  });

  it('answers 409 for a task that already ended, and leaves it as it was', async () => {
    const done = await submit('finished');
    const finished = await gated.api.settle(`${T2I}/status/${done.id}`, gated.api.alice.key);
    const response = await cancel(done.id);
    expect(response.status).toBe(409);
    expect((response.body as { detail: string }).detail).toBe(
      `Task ${done.id} has already ended with status SUCCESS; only a queued or running task can be cancelled`,
    );
    expect(await status(done.id)).toEqual(finished);
    expect(await webhooks(done.id)).toEqual([webhookOf(finished, done.id)]);

    const release = await occupyWorker();
    const queued = await submit('cancelled twice');
    expect((await cancel(queued.id)).status).toBe(200);
    const again = await cancel(queued.id);
    expect(again.status).toBe(409);
    expect((again.body as { detail: string }).detail).toContain(`status FAILURE (${CANCELLED_ERROR})`);
    expect(await webhooks(queued.id)).toEqual([webhookOf(CANCELLED, queued.id)]);
    await release();
  });

  it("answers another owner's task and a malformed id exactly like an unknown one", async () => {
    const release = await occupyWorker();
    const { id } = await submit('alice only');
    const unknown = await cancel('7d9f1c9e-2a4b-4c1d-9e8f-0a1b2c3d4e5f', gated.api.bob.key);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: 'Task not found' });
    for (const response of [
      await cancel(id, gated.api.bob.key),
      await cancel(id, gated.api.bob.key, '/sdxl/text2image/v1'),
      await cancel('not-a-uuid'),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual(unknown.body);
    }
    expect(await status(id)).toMatchObject({ status: 'PENDING' });
    await release();
    expect((await gated.api.settle(`${T2I}/status/${id}`, gated.api.alice.key)).status).toBe('SUCCESS');
  });

  it("cancels the owner's task at another pipeline's cancel path, as its status answers there", async () => {
    const release = await occupyWorker();
    const { id } = await submit('cancelled elsewhere');
    const response = await cancel(id, gated.api.alice.key, '/bgchanger/v1');
    expect([response.status, response.body]).toEqual([200, CANCELLED]);
    expect(await status(id)).toEqual(CANCELLED);
    expect(await webhooks(id)).toEqual([webhookOf(CANCELLED, id)]);
    const again = await cancel(id, gated.api.alice.key, '/upscaler/v1');
    expect(again.status).toBe(409);
    await release();
  });

  it('cancels a training at its own path: the training shape says failed, its model row fails', async () => {
    const name = `train-${uniqueName()}`;
    const submitted = await gated.api.request('POST', '/train_model/v1', {
      json: { ...gated.api.example('/train_model/v1'), model_name: `gate:${name}` },
    });
    const { id } = submitted.body as { id: string };
    await gated.engine.gate(name).started;
    const response = await gated.api.request('POST', `/train_model/v1/cancel/${id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'failed', error: CANCELLED_ERROR });
    expect((await gated.api.request('GET', `/train_model/v1/status/${id}`)).body).toEqual(response.body);
    expect(await gated.engine.gate(name).settled).toBe('aborted');
    const { rows } = await gated.api.db.pool.query('SELECT status FROM models WHERE task_id = $1', [id]);
    expect(rows).toEqual([{ status: 'failed' }]);
  });

  it('race: a cancel that waits on a claim in progress ends the task the claim started; the claim can no longer complete it', async () => {
    const release = await occupyWorker();
    const { id } = await submit('claimed by the test');
    const claimer = await gated.api.db.pool.connect();
    const leaseOwner = `test-claimer/${uniqueName()}`;
    try {
      await claimer.query('BEGIN');
      const claimed = await claimTask(claimer, { leaseOwner, routes: ['shared'], leaseMs: 30_000 });
      expect(claimed?.id).toBe(id);
      // The cancel waits for the claim's transaction, which holds the row.
      let answered = false;
      const cancelling = cancel(id).then((response) => {
        answered = true;
        return response;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(answered).toBe(false);
      await claimer.query('COMMIT');
      const response = await cancelling;
      expect(response.status).toBe(200);
      expect(response.body).toEqual(CANCELLED);
      const heldStill = await heartbeatTask(claimer, {
        id,
        leaseOwner,
        leaseMs: 30_000,
        progress: 0.5,
        message: null,
      });
      expect(heldStill).toBe(false);
      expect(await completeTask(claimer, { id, leaseOwner, result: {}, outputKeys: [] })).toBeNull();
    } finally {
      claimer.release();
    }
    expect(await status(id)).toEqual(CANCELLED);
    expect(await webhooks(id)).toEqual([webhookOf(CANCELLED, id)]);
    await release();
  });

  it('race: a task cancelled before the claim commits is never claimed', async () => {
    const release = await occupyWorker();
    const { id } = await submit('cancelled first');
    expect((await cancel(id)).status).toBe(200);
    const claimed = await claimTask(gated.api.db.pool, {
      leaseOwner: `test-claimer/${uniqueName()}`,
      routes: ['shared'],
      leaseMs: 30_000,
    });
    // Nothing else waits on the shared pool: the cancelled task is not claimable.
    expect(claimed).toBeNull();
    await release();
  });

  it('race: cancels sent while the worker claims and completes end either cancelled or finished, never both', async () => {
    const outcomes = { cancelled: 0, finished: 0 };
    for (let round = 0; round < 12; round++) {
      const submitted = await submit(`race ${round}`, { queued_image_urls: true });
      // Half the rounds give the worker a head start, so some cancels meet a running or finished task.
      if (round % 2 === 1) await new Promise((resolve) => setTimeout(resolve, round));
      const response = await cancel(submitted.id);
      const final = await eventually(async () => {
        const body = (await status(submitted.id)) as { status: string };
        return body.status === 'PENDING' ? undefined : body;
      });
      const url = submitted.download_urls![0]!;
      if (response.status === 200) {
        outcomes.cancelled++;
        expect(final).toEqual(CANCELLED);
        // The worker may still be finishing its attempt: its outputs are removed when it does.
        await eventually(async () => ((await fetch(url)).status === 404 ? true : undefined));
        expect(await imageRows(submitted.id)).toBe(0);
      } else {
        outcomes.finished++;
        expect(response.status).toBe(409);
        expect(final).toMatchObject({ status: 'SUCCESS', download_urls: submitted.download_urls });
        expect((await fetch(url)).status).toBe(200);
        expect(await imageRows(submitted.id)).toBe(submitted.download_urls!.length);
      }
      expect(await webhooks(submitted.id)).toEqual([webhookOf(final, submitted.id)]);
    }
    expect(outcomes.cancelled + outcomes.finished).toBe(12);
    // A cancel sent as soon as the submission answers beats the worker's run.
    expect(outcomes.cancelled).toBeGreaterThan(0);
  });

  it('race: a cancel at the moment the engine finishes either wins or answers 409, never both', async () => {
    for (let round = 0; round < 6; round++) {
      const name = `finish-${uniqueName()}`;
      const submitted = await submit(`gate:${name}`, { queued_image_urls: true });
      await gated.engine.gate(name).started;
      gated.engine.gate(name).open();
      const response = await cancel(submitted.id);
      const final = await gated.api.settle(`${T2I}/status/${submitted.id}`, gated.api.alice.key);
      if (response.status === 200) {
        expect(final).toEqual(CANCELLED);
        await eventually(async () =>
          (await fetch(submitted.download_urls![0]!)).status === 404 ? true : undefined,
        );
      } else {
        expect(response.status).toBe(409);
        expect(final.status).toBe('SUCCESS');
      }
      expect(await webhooks(submitted.id)).toEqual([webhookOf(final, submitted.id)]);
    }
  });
});
