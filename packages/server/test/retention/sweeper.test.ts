/**
 * Retention with the clock moved forward: the sweeper is handed a later `now` instead of the test
 * waiting days. Real PostgreSQL, real files in a local blob store.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPool } from '@imagegen/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observability/metrics.ts';
import { insertUpload } from '../../src/records/sql/insertUpload.ts';
import { deleteExpiredUploads } from '../../src/retention/sql/deleteExpiredUploads.ts';
import { type RetentionPolicy, type SweepCounts, sweepExpired } from '../../src/retention/sweeper.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';
import { submitTask } from '../../src/tasks/index.ts';
import { queueTaskIn } from '../../src/tasks/submit.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
import { createOwner, png } from '../support/fakes.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const DAY = 86_400_000;
async function until(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('the condition never held');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
const later = (ms: number) => new Date(Date.now() + ms);
const DEFAULTS: RetentionPolicy = {
  outputs: 30,
  uploads: 7,
  tasks: 30,
  webhookAttempts: 30,
  analytics: 90,
  usage: 400,
};
const ONE_DAY: RetentionPolicy = {
  outputs: 1,
  uploads: 1,
  tasks: 1,
  webhookAttempts: 1,
  analytics: 1,
  usage: 1,
};
const NOTHING: SweepCounts = {
  outputs: 0,
  uploads: 0,
  tasks: 0,
  webhook_attempts: 0,
  analytics_events: 0,
  search_events: 0,
  idempotency_keys: 0,
  usage_records: 0,
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-retention-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('what a client gets once things expire', () => {
  let api: ApiHarness;
  let store: LocalBlobStore;
  beforeAll(async () => {
    store = new LocalBlobStore(path.join(dir, 'api-files'));
    api = await startApiHarness({ store });
  });
  afterAll(() => api.close());

  const unknownTask = () => api.request('GET', `/sd/text2image/v1/status/${randomUUID()}`);
  const unknownFile = () => api.request('GET', '/files/AAAAAAAAAAAAAAAAAAAAAA/upload0.png');
  const fileOf = (url: string) => new URL(url).pathname;

  it('answers an expired task, output or upload exactly as an unknown one, each after its own time', async () => {
    const form = new FormData();
    form.append(
      'image_files',
      new Blob([new Uint8Array((await png(8, 8)).data)], { type: 'image/png' }),
      'in.png',
    );
    const uploaded = await api.request('POST', '/upload_images/v1', { body: form });
    const [uploadUrl] = (uploaded.body as { image_urls: string[] }).image_urls;
    const submitted = await api.request('POST', '/sd/text2image/v1', {
      json: { prompt: 'a red fox', negative_prompt: '', samples: 1, width: 64, height: 64 },
      headers: { 'Idempotency-Key': 'fox-1' },
    });
    const statusPath = `/sd/text2image/v1/status/${(submitted.body as { id: string }).id}`;
    const done = await api.settle(statusPath, api.alice.key);
    const [outputUrl] = done.download_urls as string[];
    expect((await api.request('GET', fileOf(outputUrl!))).status).toBe(200);
    const metrics = new Metrics();
    const sweep = (ms: number) =>
      sweepExpired({ pool: api.db.pool, store, policy: DEFAULTS, now: later(ms), metrics });

    // A day is not yet a week: only the Idempotency-Key's 24 hours are over.
    expect(await sweep(23 * 3_600_000)).toEqual(NOTHING);
    expect(await sweep(DAY + 60_000)).toEqual({ ...NOTHING, idempotency_keys: 1 });
    expect((await api.request('GET', fileOf(uploadUrl!))).status).toBe(200);

    expect(await sweep(7 * DAY + 60_000)).toEqual({ ...NOTHING, uploads: 1 });
    const upload = await api.request('GET', fileOf(uploadUrl!));
    const unknown = await unknownFile();
    expect(unknown.status).toBe(404);
    expect({ status: upload.status, body: upload.body }).toEqual({
      status: unknown.status,
      body: unknown.body,
    });
    expect((await api.request('GET', statusPath)).status).toBe(200);

    expect(await sweep(30 * DAY + 60_000)).toEqual({ ...NOTHING, outputs: 1, tasks: 1 });
    const status = await api.request('GET', statusPath);
    const missing = await unknownTask();
    expect(missing.status).toBe(404);
    expect({ status: status.status, body: status.body }).toEqual({
      status: missing.status,
      body: missing.body,
    });
    const output = await api.request('GET', fileOf(outputUrl!));
    expect({ status: output.status, body: output.body }).toEqual({
      status: unknown.status,
      body: unknown.body,
    });
    expect((await api.request('GET', '/images/v1')).body).toEqual([]);

    // The task's usage record outlives the task, until RETENTION_USAGE_DAYS.
    const today = new Date().toISOString().slice(0, 10);
    const usage = async () =>
      ((await api.request('GET', `/usage/v1?from=${today}&to=${today}`)).body as { rows: unknown[] }).rows;
    expect(await usage()).toHaveLength(1);
    expect(await sweep(399 * DAY)).toEqual(NOTHING);
    expect(await sweep(400 * DAY + 60_000)).toEqual({ ...NOTHING, usage_records: 1 });
    expect(await usage()).toEqual([]);

    const scraped = await metrics.render();
    expect(scraped).toContain('imagegen_retention_removed_total{kind="outputs"} 1');
    expect(scraped).toContain('imagegen_retention_removed_total{kind="uploads"} 1');
    expect(scraped).toContain('imagegen_retention_removed_total{kind="tasks"} 1');
    expect(scraped).toContain('imagegen_retention_removed_total{kind="idempotency_keys"} 1');
    expect(scraped).toContain('imagegen_retention_removed_total{kind="usage_records"} 1');
  });
});

describe('what the sweeper never touches', () => {
  let db: TestDatabase;
  let store: LocalBlobStore;
  let owner: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new LocalBlobStore(path.join(dir, 'live-files'));
    owner = await createOwner(db.pool);
  });
  afterAll(() => db.drop());

  const PUBLIC_URL = 'http://api.test';
  const putUpload = async (key: string) => {
    const image = await png(4, 4);
    await store.put(key, image.data, image.contentType);
    await insertUpload(db.pool, { ownerId: owner, blobKey: key, contentType: 'image/png', sizeBytes: 1 });
  };
  const putOutput = async (key: string) => {
    await store.put(key, (await png(4, 4)).data, 'image/png');
    await db.pool.query('INSERT INTO images (owner_id, blob_key, download_url) VALUES ($1, $2, $3)', [
      owner,
      key,
      `${PUBLIC_URL}/files/${key}`,
    ]);
  };
  const submit = async (input: Record<string, unknown>) =>
    (
      await submitTask(db.pool, {
        ownerId: owner,
        endpoint: '/sd/image2image/v1',
        kind: 'generation',
        publicUrl: PUBLIC_URL,
        input: { prompt: 'p', seed: 1, ...input },
      })
    ).id;
  const finish = (ids: string[]) =>
    db.pool.query("UPDATE tasks SET state = 'succeeded', finished_at = now() WHERE id = ANY($1)", [ids]);
  const taskCount = async (ids: string[]) =>
    (await db.pool.query('SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1)', [ids])).rows[0].n;

  it('keeps queued and running tasks, the files they name, models and their pictures, and undelivered webhooks', async () => {
    await putUpload('liveupload0000000000000/upload0.png');
    await putOutput('liveoutput0000000000000/0.png');
    await putOutput('modelpicture00000000000/0.png');
    await db.pool.query(
      `INSERT INTO models (owner_id, model_id, model_name, base_model, model_type, sample_images, status)
       VALUES ($1, 'abcdef0123456789', 'mine', 'sdxl', 'lora', $2, 'ready')`,
      [owner, JSON.stringify([`${PUBLIC_URL}/files/modelpicture00000000000/0.png`])],
    );
    const queued = await submit({ init_image: `${PUBLIC_URL}/files/liveupload0000000000000/upload0.png` });
    const running = await submit({ init_image: `${PUBLIC_URL}/files/liveoutput0000000000000/0.png` });
    await db.pool.query("UPDATE tasks SET state = 'running', started_at = now() WHERE id = $1", [running]);
    const finished = await submit({});
    const notifying = await submit({});
    await finish([finished, notifying]);
    await db.pool.query(
      "INSERT INTO webhook_deliveries (owner_id, task_id, url, payload) VALUES ($1, $2, 'https://hooks.example.com/', '{}')",
      [owner, notifying],
    );

    const sweep = () => sweepExpired({ pool: db.pool, store, policy: ONE_DAY, now: later(400 * DAY) });
    expect(await sweep()).toEqual({ ...NOTHING, tasks: 1 });
    expect(await taskCount([queued, running, notifying])).toBe(3);
    expect(await taskCount([finished])).toBe(0);
    for (const key of [
      'liveupload0000000000000/upload0.png',
      'liveoutput0000000000000/0.png',
      'modelpicture00000000000/0.png',
    ])
      expect(await store.get(key), key).not.toBeNull();

    // Once they end, and the webhook is delivered, they go too; the model and its picture stay.
    await finish([queued, running]);
    await db.pool.query("UPDATE webhook_deliveries SET state = 'delivered' WHERE task_id = $1", [notifying]);
    expect(await sweep()).toEqual({ ...NOTHING, tasks: 3, uploads: 1, outputs: 1 });
    expect(await store.get('liveupload0000000000000/upload0.png')).toBeNull();
    expect(await store.get('liveoutput0000000000000/0.png')).toBeNull();
    expect(await store.get('modelpicture00000000000/0.png')).not.toBeNull();
    expect((await db.pool.query('SELECT count(*)::int AS n FROM models')).rows[0].n).toBe(1);
  });

  it('keeps for ever what a setting of 0 (null) keeps', async () => {
    await putUpload('foreverupload0000000000/upload0.png');
    const forever: RetentionPolicy = {
      outputs: null,
      uploads: null,
      tasks: null,
      webhookAttempts: null,
      analytics: null,
      usage: null,
    };
    expect(await sweepExpired({ pool: db.pool, store, policy: forever, now: later(10_000 * DAY) })).toEqual(
      NOTHING,
    );
    expect(await store.get('foreverupload0000000000/upload0.png')).not.toBeNull();
  });

  it('keeps an expired upload a task submitted just now names, until that task ends', async () => {
    const key = 'justsubmitted0000000000/upload0.png';
    await putUpload(key);
    const sweep = () => sweepExpired({ pool: db.pool, store, policy: ONE_DAY, now: later(8 * DAY) });
    // The link as a client sends it, in a list field, with a query string.
    const task = await submit({ image_urls: [`${PUBLIC_URL}/files/${key}?download=1`] });
    await sweep();
    expect(await store.get(key)).not.toBeNull();
    expect((await db.pool.query('SELECT 1 FROM uploads WHERE blob_key = $1', [key])).rowCount).toBe(1);
    await finish([task]);
    expect((await sweep()).uploads).toBeGreaterThan(0);
    expect(await store.get(key)).toBeNull();
    expect((await db.pool.query('SELECT 1 FROM uploads WHERE blob_key = $1', [key])).rowCount).toBe(0);
  });

  it('never deletes a file between a submission that names it and its commit', async () => {
    const cutoff = later(8 * DAY);
    const submission = (key: string) => ({
      ownerId: owner,
      endpoint: '/sd/image2image/v1',
      kind: 'generation' as const,
      publicUrl: PUBLIC_URL,
      input: { prompt: 'p', seed: 1, init_image: `${PUBLIC_URL}/files/${key}` },
    });

    // The submission holds the file first: the sweepers skip it without waiting, and once the
    // task is committed they see it is live.
    const first = 'submissionfirst00000000/upload0.png';
    await putUpload(first);
    const submitter = await db.pool.connect();
    let task: string;
    try {
      await submitter.query('BEGIN');
      task = (await queueTaskIn(submitter, submission(first))).id;
      const [a, b] = await Promise.all([
        sweepExpired({ pool: db.pool, store, policy: ONE_DAY, now: cutoff }),
        sweepExpired({ pool: db.pool, store, policy: ONE_DAY, now: cutoff }),
      ]);
      expect(a.uploads + b.uploads).toBe(0);
      await submitter.query('COMMIT');
    } finally {
      submitter.release();
    }
    expect((await sweepExpired({ pool: db.pool, store, policy: ONE_DAY, now: cutoff })).uploads).toBe(0);
    expect(await store.get(first)).not.toBeNull();
    await finish([task]);

    // The sweeper holds the file first: the submission waits until the file is gone for good,
    // so no task is ever acknowledged with a file being deleted under it.
    const second = 'sweeperfirst00000000000/upload0.png';
    await putUpload(second);
    const sweeper = await db.pool.connect();
    try {
      await sweeper.query('BEGIN');
      const deleting = await deleteExpiredUploads(sweeper, cutoff, 10);
      expect(deleting).toContain(second);
      let acknowledged = false;
      const submitted = submitTask(db.pool, submission(second)).then((result) => {
        acknowledged = true;
        return result;
      });
      await until(async () => {
        const { rows } = await db.pool.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        return rows[0].n === 1;
      });
      expect(acknowledged).toBe(false);
      await Promise.all(deleting.map((key) => store.delete(key)));
      await sweeper.query('COMMIT');
      await submitted;
    } finally {
      sweeper.release();
    }
    expect(
      (await db.pool.query('SELECT count(*)::int AS n FROM uploads WHERE blob_key = $1', [second])).rows[0].n,
    ).toBe(0);
  });
});

describe('sweepers racing', () => {
  let db: TestDatabase;
  let store: LocalBlobStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new LocalBlobStore(path.join(dir, 'race-files'));
  });
  afterAll(() => db.drop());

  const taskStates = async (ids: string[]) =>
    (
      await db.pool.query<{ state: string }>(
        'SELECT state FROM tasks WHERE id = ANY($1) ORDER BY array_position($1, id)',
        [ids],
      )
    ).rows.map((row) => row.state);

  it('delete every expired row once between them, in small batches, and every file but the live ones', async () => {
    const owner = await createOwner(db.pool);
    const keys = Array.from({ length: 150 }, (_, n) => `racefolder${String(n).padStart(12, '0')}/0.png`);
    const image = await png(2, 2);
    for (const [n, key] of keys.entries()) {
      await store.put(key, image.data, image.contentType);
      if (n % 2 === 0) {
        await db.pool.query('INSERT INTO images (owner_id, blob_key, download_url) VALUES ($1, $2, $2)', [
          owner,
          key,
        ]);
      } else {
        await insertUpload(db.pool, { ownerId: owner, blobKey: key, contentType: 'image/png', sizeBytes: 1 });
      }
    }
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO tasks (owner_id, endpoint, kind, input) VALUES ($1, '/sd/text2image/v1', 'generation', '{}') RETURNING id`,
      [owner],
    );
    const queued = rows[0]!.id;
    // Live tasks naming 20 of the files (10 outputs, 10 uploads), and a finished task whose
    // webhook is still being delivered: all kept, whichever sweeper looks.
    const linksTo = (from: number) =>
      keys.slice(from, from + 10).map((key) => `http://api.test/files/${key}`);
    const submitLive = (from: number) =>
      submitTask(db.pool, {
        ownerId: owner,
        endpoint: '/sd/image2image/v1',
        kind: 'generation',
        publicUrl: 'http://api.test',
        input: { prompt: 'p', image_urls: linksTo(from) },
      });
    const live = [(await submitLive(0)).id, (await submitLive(10)).id];
    await db.pool.query("UPDATE tasks SET state = 'running', started_at = now() WHERE id = $1", [live[1]]);
    const notifying = (
      await db.pool.query<{ id: string }>(
        `INSERT INTO tasks (owner_id, endpoint, kind, input, state, finished_at)
         VALUES ($1, '/sd/text2image/v1', 'generation', '{}', 'succeeded', now()) RETURNING id`,
        [owner],
      )
    ).rows[0]!.id;
    await db.pool.query(
      "INSERT INTO webhook_deliveries (owner_id, task_id, url, payload) VALUES ($1, $2, 'https://hooks.example.com/', '{}')",
      [owner, notifying],
    );
    await db.pool.query(
      `INSERT INTO tasks (owner_id, endpoint, kind, input, state, finished_at)
       SELECT $1, '/sd/text2image/v1', 'generation', '{}', 'failed', now() FROM generate_series(1, 200)`,
      [owner],
    );
    await db.pool.query(
      `WITH d AS (INSERT INTO webhook_deliveries (owner_id, url, payload, state)
                  SELECT $1, 'https://hooks.example.com/', '{}', 'delivered' FROM generate_series(1, 60) RETURNING id)
       INSERT INTO webhook_attempts (delivery_id, owner_id, attempt, started_at, duration_ms)
       SELECT d.id, $1, a, now(), 5 FROM d, generate_series(1, 2) AS a`,
      [owner],
    );
    await db.pool.query(
      `INSERT INTO analytics_events (type, path, occurred_at) SELECT 'page_view', '/docs', now() FROM generate_series(1, 300)`,
    );
    await db.pool.query(
      `INSERT INTO search_events (event_type, event_name, index_name, user_token, object_ids, event_at)
       SELECT 'click', 'hit', 'docs', 'u', '{a}', now() FROM generate_series(1, 40)`,
    );
    await db.pool.query(
      `INSERT INTO idempotency_keys (owner_id, idempotency_key, request_hash, task_id)
       SELECT $1, 'key-' || n, 'h', $2 FROM generate_series(1, 90) AS n`,
      [owner, queued],
    );
    await db.pool.query(
      `INSERT INTO task_usage (task_id, owner_id, pipeline, succeeded, queue_seconds, run_seconds, finished_at)
       SELECT gen_random_uuid(), $1, '/sd/text2image/v1', true, 1, 2, now() FROM generate_series(1, 170)`,
      [owner],
    );

    // Each sweeper deletes files through its own store, counting every key it is asked to delete.
    // Its first delete waits (a few seconds at most) until the other sweeper deletes too, so the
    // two hold batches at the same moment however the machine schedules them: on a loaded one,
    // the first could otherwise finish everything before the second has connected.
    const deletedBy = [new Map<string, number>(), new Map<string, number>()];
    const signals = [0, 1].map(() => {
      let resolve!: () => void;
      return { promise: new Promise<void>((r) => (resolve = r)), resolve: () => resolve() };
    });
    const waitForOther = (n: number) =>
      Promise.race([signals[1 - n]!.promise, new Promise((r) => setTimeout(r, 5_000).unref())]);
    const counting = (n: number) =>
      Object.assign(Object.create(store) as LocalBlobStore, {
        delete: async (key: string) => {
          const deleted = deletedBy[n]!;
          if (deleted.size === 0) {
            signals[n]!.resolve();
            await waitForOther(n);
          }
          deleted.set(key, (deleted.get(key) ?? 0) + 1);
          return store.delete(key);
        },
      });
    const pools = [createPool(db.url, { max: 3 }), createPool(db.url, { max: 3 })];
    try {
      const now = later(400 * DAY);
      const results = await Promise.all(
        pools.map((pool, n) =>
          sweepExpired({ pool, store: counting(n), policy: ONE_DAY, now, batchSize: 7 }),
        ),
      );
      const total = { ...NOTHING };
      for (const counts of results)
        for (const [kind, n] of Object.entries(counts)) total[kind as keyof SweepCounts] += n;
      expect(total).toEqual({
        outputs: 65,
        uploads: 65,
        tasks: 200,
        webhook_attempts: 120,
        analytics_events: 300,
        search_events: 40,
        idempotency_keys: 90,
        usage_records: 170,
      });
      // Both did some of the work.
      for (const counts of results) expect(Object.values(counts).reduce((a, b) => a + b)).toBeGreaterThan(0);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
    const left = await db.pool.query(
      `SELECT (SELECT count(*) FROM images)::int AS images, (SELECT count(*) FROM uploads)::int AS uploads,
              (SELECT count(*) FROM tasks)::int AS tasks, (SELECT count(*) FROM webhook_attempts)::int AS attempts,
              (SELECT count(*) FROM analytics_events)::int AS analytics, (SELECT count(*) FROM search_events)::int AS search,
              (SELECT count(*) FROM idempotency_keys)::int AS keys, (SELECT count(*) FROM task_usage)::int AS usage`,
    );
    expect(left.rows[0]).toEqual({
      images: 10,
      uploads: 10,
      tasks: 4,
      attempts: 0,
      analytics: 0,
      search: 0,
      keys: 0,
      usage: 0,
    });
    expect(await taskStates([queued, ...live, notifying])).toEqual([
      'queued',
      'queued',
      'running',
      'succeeded',
    ]);
    // Every expired file was deleted once, by one sweeper; the live ones by neither.
    const [a, b] = deletedBy as [Map<string, number>, Map<string, number>];
    for (const key of a.keys()) expect(b.has(key), key).toBe(false);
    expect([...a.values(), ...b.values()].every((times) => times === 1)).toBe(true);
    expect(new Set([...a.keys(), ...b.keys()])).toEqual(new Set(keys.slice(20)));
    for (const key of keys.slice(0, 20)) expect(await store.get(key), key).not.toBeNull();
    for (const key of keys.slice(20)) expect(await store.get(key), key).toBeNull();
  });
});
