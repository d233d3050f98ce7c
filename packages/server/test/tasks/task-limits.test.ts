import { createEngineRegistry, type Engine } from '@imagegen/engines';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  getTaskForOwner,
  type SubmitTaskParams,
  startWorker,
  submitTask,
  type TaskRecord,
  type WorkerOptions,
} from '../../src/tasks/index.ts';
import { claimTask } from '../../src/tasks/sql/claimTask.ts';
import { completeTask } from '../../src/tasks/sql/completeTask.ts';
import { taskLimitsFromEnv } from '../../src/tasks/task-limits.ts';
import { enqueueWebhook } from '../../src/webhooks/webhook-outbox.ts';
import {
  createOwner,
  eventually,
  FakeBlobStore,
  FakeImageFetcher,
  fakeEngine,
  png,
} from '../support/fakes.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/**
 * The limits on a task's running: its deadline (Cancel-After), the operator's time limit per
 * pipeline, and the cap of each plan on one owner's running tasks.
 */
describe('task limits', () => {
  let db: TestDatabase;
  const running: { stop: AbortController; stopped: Promise<void> }[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    const all = running.splice(0);
    for (const r of all) r.stop.abort();
    await Promise.all(all.map((r) => r.stopped));
  });
  afterAll(() => db.drop());

  function run(engines: Engine[], options: Partial<WorkerOptions> = {}) {
    const stop = new AbortController();
    const worker = startWorker({
      pool: db.pool,
      engines: createEngineRegistry(engines, { enabled: engines.map((e) => e.name), pinned: {} }),
      fetcher: new FakeImageFetcher(),
      store: new FakeBlobStore(),
      publicUrl: 'http://api.test',
      signal: stop.signal,
      leaseMs: 1_000,
      pollMs: 100,
      retryBaseMs: 10,
      imageFields: () => [],
      ...options,
    });
    running.push({ stop, stopped: worker.stopped });
  }

  const submit = (
    ownerId: string,
    endpoint: string,
    input: Record<string, unknown>,
    more: Partial<SubmitTaskParams> = {},
  ) =>
    submitTask(db.pool, {
      ownerId,
      endpoint,
      kind: 'generation',
      input,
      publicUrl: 'http://api.test',
      ...more,
    });

  const settled = (ownerId: string, id: string): Promise<TaskRecord> =>
    eventually(async () => {
      const task = await getTaskForOwner(db.pool, ownerId, id);
      return task && (task.state === 'succeeded' || task.state === 'failed') ? task : undefined;
    });

  /** An engine whose jobs wait until the worker aborts them, remembering why. */
  function stuckEngine(pipeline: string) {
    const reasons: string[] = [];
    const engine = fakeEngine('stuck', [pipeline], (_job, ctx) => {
      return new Promise((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => {
          reasons.push((ctx.signal.reason as Error).message);
          reject(new Error('aborted'));
        }),
      );
    });
    return { engine, reasons };
  }

  describe('a deadline (Cancel-After)', () => {
    it('fails a queued task whose deadline passed without running it, and queues its webhook', async () => {
      const owner = await createOwner(db.pool);
      const started = Date.now();
      const { id } = await submit(
        owner,
        '/logo/v1',
        { prompt: 'late', webhook: 'https://hooks.example/late' },
        { cancelAfter: { ms: 1_000, text: '1s' } },
      );
      await new Promise((resolve) => setTimeout(resolve, 1_100 - (Date.now() - started)));
      const engine = fakeEngine('fake', ['/logo/v1']);
      run([engine], { enqueueWebhook });
      const task = await settled(owner, id);
      expect([task.state, task.error, task.attempts, task.startedAt]).toEqual([
        'failed',
        "the task's deadline (Cancel-After: 1s) passed",
        0,
        null,
      ]);
      expect(engine.jobs).toEqual([]);
      const { rows } = await db.pool.query<{ payload: string }>(
        'SELECT payload FROM webhook_deliveries WHERE task_id = $1',
        [id],
      );
      expect(rows.map((row) => JSON.parse(row.payload))).toEqual([
        { status: 'FAILURE', error: "the task's deadline (Cancel-After: 1s) passed", id, path: '/logo/v1' },
      ]);
    });

    it('is never claimed once passed, even before it is failed', async () => {
      const owner = await createOwner(db.pool);
      const { id } = await submit(
        owner,
        '/logo/v1',
        { prompt: 'late' },
        { cancelAfter: { ms: 1_000, text: '1s' } },
      );
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const claimed = await claimTask(db.pool, {
        leaseOwner: 'test/late',
        routes: ['shared'],
        leaseMs: 10_000,
      });
      expect(claimed?.id).not.toBe(id);
      expect((await getTaskForOwner(db.pool, owner, id))?.state).toBe('queued');
      if (claimed)
        await completeTask(db.pool, { id: claimed.id, leaseOwner: 'test/late', result: {}, outputKeys: [] });
    });

    it('aborts a running task at its deadline and fails it at once, not retried', async () => {
      const owner = await createOwner(db.pool);
      const { engine, reasons } = stuckEngine('/instamodel/v1');
      run([engine]);
      const started = Date.now();
      const { id } = await submit(
        owner,
        '/instamodel/v1',
        { prompt: 'slow' },
        { cancelAfter: { ms: 1_500, text: '1s500ms' } },
      );
      const task = await settled(owner, id);
      const tookMs = Date.now() - started;
      const error = "the task's deadline (Cancel-After: 1s500ms) passed";
      expect([task.state, task.error, task.attempts]).toEqual(['failed', error, 1]);
      expect(reasons).toEqual([error]);
      expect(tookMs).toBeGreaterThanOrEqual(1_400);
      expect(tookMs).toBeLessThan(4_000);
    });

    it('leaves a task that ends before its deadline alone', async () => {
      const owner = await createOwner(db.pool);
      run([fakeEngine('fake', ['/logo/v1'])]);
      const { id } = await submit(
        owner,
        '/logo/v1',
        { prompt: 'quick' },
        { cancelAfter: { ms: 60_000, text: '1m' } },
      );
      expect((await settled(owner, id)).state).toBe('succeeded');
    });
  });

  describe('the time limit per pipeline (TASK_MAX_RUN_SECONDS_BY_PIPELINE)', () => {
    it("aborts an attempt past its pipeline's limit and retries it, as the worker's own limit does", async () => {
      const owner = await createOwner(db.pool);
      const { engine, reasons } = stuckEngine('/photomaker/v1');
      run([engine], { attemptTimeoutMs: 60_000, attemptTimeoutsByPipeline: { '/photomaker/v1': 200 } });
      const { id } = await submit(owner, '/photomaker/v1', { prompt: 'stuck' }, { maxAttempts: 2 });
      const task = await settled(owner, id);
      expect([task.attempts, task.error]).toEqual([2, 'engine error: the attempt took longer than 0.2 s']);
      expect(reasons).toEqual(['the attempt took longer than 0.2 s', 'the attempt took longer than 0.2 s']);
    });

    it('is read from the settings, refusing what is not a task path, a plan or a number in bounds', () => {
      const limits = taskLimitsFromEnv({
        TASK_MAX_RUN_SECONDS: '900',
        TASK_MAX_RUN_SECONDS_BY_PIPELINE: ' /sd/text2image/v1=60 , /train_model/v1=7200',
        PLAN_CONCURRENCY: 'FREE=2,UNLIMITED=0',
      });
      expect(limits.attemptTimeoutMs).toBe(900_000);
      expect(limits.attemptTimeoutsByPipeline).toEqual({
        '/sd/text2image/v1': 60_000,
        '/train_model/v1': 7_200_000,
      });
      expect([
        limits.planConcurrency.FREE,
        limits.planConcurrency.UNLIMITED,
        limits.planConcurrency.STANDARD,
      ]).toEqual([2, 0, 4]);
      expect(taskLimitsFromEnv({}).attemptTimeoutMs).toBe(3_600_000);
      expect(() => taskLimitsFromEnv({ TASK_MAX_RUN_SECONDS_BY_PIPELINE: '/sd/text2image/v1' })).toThrow(
        'TASK_MAX_RUN_SECONDS_BY_PIPELINE: "/sd/text2image/v1" is not <name>=<number>',
      );
      expect(() => taskLimitsFromEnv({ TASK_MAX_RUN_SECONDS_BY_PIPELINE: '/models/v1=5' })).toThrow(
        'is not a path that queues tasks',
      );
      expect(() => taskLimitsFromEnv({ TASK_MAX_RUN_SECONDS: '0' })).toThrow('TASK_MAX_RUN_SECONDS: "0"');
      expect(() => taskLimitsFromEnv({ TASK_MAX_RUN_SECONDS: '1e3' })).toThrow('not a whole number');
      expect(() => taskLimitsFromEnv({ PLAN_CONCURRENCY: 'GOLD=3' })).toThrow(
        'PLAN_CONCURRENCY: "GOLD" is not a plan',
      );
      expect(() => taskLimitsFromEnv({ PLAN_CONCURRENCY: 'FREE=-1' })).toThrow('PLAN_CONCURRENCY: "-1"');
    });
  });

  describe('concurrency per plan', () => {
    it("runs a capped owner's tasks one after another while another owner's run alongside", async () => {
      const capped = await createOwner(db.pool, 'FREE');
      const other = await createOwner(db.pool, 'UNLIMITED');
      const now = { capped: 0, other: 0 };
      const most = { capped: 0, other: 0, together: 0 };
      const engine = fakeEngine('timed', ['/sdxl/text2image/v1'], async (job) => {
        const who = String(job.input.prompt).split(' ')[0] as 'capped' | 'other';
        now[who] += 1;
        most[who] = Math.max(most[who], now[who]);
        most.together = Math.max(most.together, now.capped + now.other);
        await new Promise((resolve) => setTimeout(resolve, 200));
        now[who] -= 1;
        return { images: [await png(8, 8)] };
      });
      const ids: [string, string][] = [];
      for (let n = 0; n < 3; n++)
        ids.push([capped, (await submit(capped, '/sdxl/text2image/v1', { prompt: `capped ${n}` })).id]);
      for (let n = 0; n < 3; n++)
        ids.push([other, (await submit(other, '/sdxl/text2image/v1', { prompt: `other ${n}` })).id]);
      // A lease long enough that a loaded machine cannot let one expire: a reclaimed task would run
      // twice, and its times would interleave with the next one's though the cap held.
      run([engine], { concurrency: 4, planConcurrency: { FREE: 1, UNLIMITED: 0 }, leaseMs: 10_000 });
      const tasks = await Promise.all(ids.map(([owner, id]) => settled(owner, id)));
      expect(tasks.map((task) => [task.state, task.attempts])).toEqual(Array(6).fill(['succeeded', 1]));
      expect(most.capped).toBe(1);
      expect(most.other).toBeGreaterThanOrEqual(2);
      expect(most.together).toBeGreaterThanOrEqual(3);
      // One after another: each of the capped owner's tasks started after the one before ended.
      const mine = tasks.slice(0, 3).sort((a, b) => a.startedAt!.getTime() - b.startedAt!.getTime());
      for (let n = 1; n < 3; n++)
        expect(mine[n]!.startedAt!.getTime()).toBeGreaterThanOrEqual(mine[n - 1]!.finishedAt!.getTime());
    });

    it('never passes the cap when many claims race for one owner', async () => {
      for (const cap of [1, 2]) {
        const owner = await createOwner(db.pool, 'BASIC');
        for (let n = 0; n < 10; n++) await submit(owner, '/sd/text2image/v1', { prompt: `race ${n}` });
        for (let round = 0; round < 3; round++) {
          const claims = await Promise.all(
            Array.from({ length: 8 }, (_, n) =>
              claimTask(db.pool, {
                leaseOwner: `race/${cap}/${round}/${n}`,
                routes: ['shared'],
                leaseMs: 10_000,
                planConcurrency: { BASIC: cap },
              }),
            ),
          );
          const taken = claims.flatMap((row, n) =>
            row ? [{ id: row.id, leaseOwner: `race/${cap}/${round}/${n}` }] : [],
          );
          expect(taken.length, `cap ${cap}, round ${round}`).toBe(cap);
          const { rows } = await db.pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM tasks WHERE owner_id = $1 AND state = 'running'",
            [owner],
          );
          expect(rows[0]!.n).toBe(cap);
          for (const { id, leaseOwner } of taken) {
            await completeTask(db.pool, { id, leaseOwner, result: {}, outputKeys: [] });
          }
        }
        await db.pool.query(
          "UPDATE tasks SET state = 'failed', finished_at = now() WHERE owner_id = $1 AND state = 'queued'",
          [owner],
        );
      }
    });

    it('has no cap for a plan the setting leaves out, or sets to 0', async () => {
      const owner = await createOwner(db.pool, 'STANDARD');
      for (const planConcurrency of [{ FREE: 1 }, { STANDARD: 0 }] as Record<string, number>[]) {
        for (let n = 0; n < 3; n++) await submit(owner, '/sd/text2image/v1', { prompt: `free ${n}` });
        const claims = [];
        for (let n = 0; n < 3; n++) {
          const leaseOwner = `uncapped/${n}`;
          claims.push({
            leaseOwner,
            row: await claimTask(db.pool, {
              leaseOwner,
              routes: ['shared'],
              leaseMs: 10_000,
              planConcurrency,
            }),
          });
        }
        expect(claims.filter(({ row }) => row?.owner_id === owner)).toHaveLength(3);
        for (const { row, leaseOwner } of claims) {
          await completeTask(db.pool, { id: row!.id, leaseOwner, result: {}, outputKeys: [] });
        }
      }
    });
  });
});
