import { createEngineRegistry } from '@imagegen/engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTaskForOwner, startWorker, submitTask } from '../../src/tasks/index.ts';
import { claimTask } from '../../src/tasks/sql/claimTask.ts';
import { completeTask } from '../../src/tasks/sql/completeTask.ts';
import {
  createOwner,
  eventually,
  FakeBlobStore,
  FakeImageFetcher,
  fakeEngine,
  png,
} from '../support/fakes.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const TASK_MS = 40;

describe('claiming tasks', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  const submit = (ownerId: string, n: number) =>
    submitTask(db.pool, {
      ownerId,
      endpoint: '/sd/text2image/v1',
      kind: 'generation',
      input: { prompt: `task ${n}` },
      publicUrl: 'http://api.test',
    });

  it('alternates between owners that both have work queued', async () => {
    const alice = await createOwner(db.pool);
    const carol = await createOwner(db.pool);
    for (let n = 0; n < 4; n++) await submit(alice, n);
    for (let n = 0; n < 4; n++) await submit(carol, n);
    const order: string[] = [];
    for (let n = 0; n < 8; n++) {
      const leaseOwner = `sequence/${n}`;
      const row = (await claimTask(db.pool, {
        leaseOwner,
        routes: ['shared'],
        leaseMs: 10_000,
      }))!;
      order.push(row.owner_id === alice ? 'alice' : 'carol');
      await completeTask(db.pool, { id: row.id, leaseOwner, result: {}, outputKeys: [] });
    }
    expect(order).toEqual(['alice', 'carol', 'alice', 'carol', 'alice', 'carol', 'alice', 'carol']);
  });

  it("records a task's images with its completion, and none when the claim no longer holds it", async () => {
    const owner = await createOwner(db.pool);
    await submit(owner, 0);
    const row = (await claimTask(db.pool, { leaseOwner: 'images/1', routes: ['shared'], leaseMs: 10_000 }))!;
    const images = [
      { blobKey: 'k1/img0.png', downloadUrl: 'http://api.test/files/k1/img0.png' },
      { blobKey: 'k1/img1.png', downloadUrl: 'http://api.test/files/k1/img1.png' },
    ];
    const complete = (leaseOwner: string) =>
      completeTask(db.pool, {
        id: row.id,
        leaseOwner,
        result: { meta: { seed: 7 } },
        outputKeys: images.map((image) => image.blobKey),
        images,
        imageJson: { endpoint: '/sd/text2image/v1', seed: 7 },
        modelId: 'sd1.5',
      });
    const recorded = async () =>
      (
        await db.pool.query(
          'SELECT owner_id, model_id, blob_key, download_url, json FROM images WHERE task_id = $1 ORDER BY blob_key',
          [row.id],
        )
      ).rows;
    expect(await complete('images/another-claim')).toBeNull();
    expect(await recorded()).toEqual([]);
    const done = await complete('images/1');
    expect(done?.state).toBe('succeeded');
    expect(await recorded()).toEqual(
      images.map((image) => ({
        owner_id: owner,
        model_id: 'sd1.5',
        blob_key: image.blobKey,
        download_url: image.downloadUrl,
        json: { endpoint: '/sd/text2image/v1', seed: 7 },
      })),
    );
    // Completed once: a second completion changes nothing and records nothing more.
    expect(await complete('images/1')).toBeNull();
    expect(await recorded()).toHaveLength(2);
  });

  it("keeps a claim's relaxed commit to the claim: the connection stays synchronous", async () => {
    const owner = await createOwner(db.pool);
    await submit(owner, 0);
    const client = await db.pool.connect();
    try {
      // The test cluster runs without fsync; the product's sessions commit synchronously.
      await client.query('SET synchronous_commit = on');
      const row = await claimTask(client, { leaseOwner: 'sync/1', routes: ['shared'], leaseMs: 10_000 });
      expect(row).not.toBeNull();
      const setting = await client.query('SHOW synchronous_commit');
      expect(setting.rows[0].synchronous_commit).toBe('on');
    } finally {
      client.release(true);
    }
  });

  it('keeps several claims in flight when several slots are free, three at most', async () => {
    const owner = await createOwner(db.pool);
    await Promise.all(Array.from({ length: 40 }, (_, n) => submit(owner, n)));
    const image = await png(8, 8);
    const engine = fakeEngine('quick', ['/sd/text2image/v1'], async () => ({ images: [image] }));
    // Every claim takes 30 ms longer than its statement, as over a slow network: one at a time, a
    // worker could start at most one task per 30 ms whatever its slots.
    let inFlight = 0;
    let most = 0;
    const pool = Object.create(db.pool) as typeof db.pool;
    pool.query = (async (config: unknown, ...rest: unknown[]) => {
      const claim = (config as { name?: string } | undefined)?.name === 'claimTask';
      if (claim) most = Math.max(most, ++inFlight);
      try {
        if (claim) await new Promise((resolve) => setTimeout(resolve, 30));
        return await (db.pool.query as (...args: unknown[]) => unknown)(config, ...rest);
      } finally {
        if (claim) inFlight--;
      }
    }) as typeof pool.query;
    const stop = new AbortController();
    const worker = startWorker({
      pool,
      engines: createEngineRegistry([engine], { enabled: ['quick'], pinned: {} }),
      fetcher: new FakeImageFetcher(),
      store: new FakeBlobStore(),
      publicUrl: 'http://api.test',
      signal: stop.signal,
      concurrency: 6,
    });
    try {
      await eventually(async () => (engine.jobs.length >= 40 ? true : undefined));
      expect(most).toBe(3);
      const runs = await db.pool.query(
        `SELECT count(*)::int AS n, max(attempts)::int AS attempts FROM tasks WHERE owner_id = $1`,
        [owner],
      );
      expect(runs.rows[0]).toEqual({ n: 40, attempts: 1 });
    } finally {
      stop.abort();
      await worker.stopped;
    }
  });

  for (const concurrency of [1, 2]) {
    it(`runs a single task behind another owner's 1,000 queued ones next (${concurrency} slot(s))`, async () => {
      const busy = await createOwner(db.pool);
      const single = await createOwner(db.pool);
      await Promise.all(Array.from({ length: 1_000 }, (_, n) => submit(busy, n)));
      const image = await png(8, 8);
      const engine = fakeEngine('timed', ['/sd/text2image/v1'], async () => {
        await new Promise((resolve) => setTimeout(resolve, TASK_MS));
        return { images: [image] };
      });
      const stop = new AbortController();
      const worker = startWorker({
        pool: db.pool,
        engines: createEngineRegistry([engine], { enabled: ['timed'], pinned: {} }),
        fetcher: new FakeImageFetcher(),
        store: new FakeBlobStore(),
        publicUrl: 'http://api.test',
        signal: stop.signal,
        concurrency,
      });
      try {
        await eventually(async () => (engine.jobs.length >= 5 ? true : undefined));
        const submittedAt = new Date();
        const { id } = await submit(single, 0);
        const done = await eventually(async () => {
          const task = await getTaskForOwner(db.pool, single, id);
          return task?.state === 'succeeded' ? task : undefined;
        });
        // Only claims already in flight when the single task arrived may go first: at most one
        // per slot.
        const overtaking = await db.pool.query(
          `SELECT count(*)::int AS n FROM tasks
           WHERE owner_id = $1 AND started_at > $2 AND started_at < $3`,
          [busy, submittedAt, done.startedAt],
        );
        // That is "next": no claim made after it arrived went before it. (A bound on the time it
        // waited said the same on an idle machine and failed on a busy one.)
        expect(overtaking.rows[0].n).toBeLessThanOrEqual(concurrency);
      } finally {
        stop.abort();
        await worker.stopped;
        await db.pool.query(`DELETE FROM tasks WHERE owner_id = $1`, [busy]);
      }
    });
  }
});
