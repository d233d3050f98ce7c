import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createEngineRegistry,
  EngineInputError,
  type SafetyChecker,
  type SafetyVerdict,
} from '@imagegen/engines';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createImageFetcher } from '../../src/fetch/image-fetcher.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';
import {
  getTaskForOwner,
  startWorker,
  submitTask,
  type TaskRecord,
  taskStatusBody,
  trainingStatus,
  type WorkerOptions,
} from '../../src/tasks/index.ts';
import { claimTask } from '../../src/tasks/sql/claimTask.ts';
import { completeTask } from '../../src/tasks/sql/completeTask.ts';
import { enqueueWebhook } from '../../src/webhooks/webhook-outbox.ts';
import { createOwner, createServer, eventually, fakeEngine, png } from '../support/fakes.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const PUBLIC_URL = 'http://api.test';

describe('the worker', () => {
  let db: TestDatabase;
  let owner: string;
  let images: Server;
  let imagesUrl: string;
  const running: { stop: AbortController; stopped: Promise<void> }[] = [];
  let store: LocalBlobStore;
  const fetcher = createImageFetcher({ allowPrivate: true });

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new LocalBlobStore(await mkdtemp(path.join(tmpdir(), 'imagegen-tasks-')));
    owner = await createOwner(db.pool);
    const photo = (await png(120, 90, { r: 10, g: 120, b: 200 })).data;
    images = createHttpServer((req, res) => {
      if (req.url === '/photo.png') res.writeHead(200, { 'content-type': 'image/png' }).end(photo);
      else res.writeHead(404).end('not here');
    });
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    imagesUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    const all = running.splice(0);
    for (const r of all) r.stop.abort();
    await Promise.all(all.map((r) => r.stopped));
  });
  afterAll(async () => {
    await new Promise((resolve) => images.close(resolve));
    await db.drop();
    await rm(store.dir, { recursive: true, force: true });
  });

  function run(engines: ReturnType<typeof fakeEngine>[], options: Partial<WorkerOptions> = {}) {
    const stop = new AbortController();
    const worker = startWorker({
      pool: db.pool,
      engines: createEngineRegistry(engines, { enabled: engines.map((e) => e.name), pinned: {} }),
      fetcher,
      store,
      publicUrl: PUBLIC_URL,
      signal: stop.signal,
      leaseMs: 2_000,
      pollMs: 200,
      retryBaseMs: 10,
      ...options,
    });
    running.push({ stop, stopped: worker.stopped });
    return { worker, stop };
  }

  async function submit(
    endpoint: string,
    input: Record<string, unknown>,
    ownerId = owner,
    maxAttempts?: number,
    id?: string,
  ) {
    const kind = endpoint.startsWith('/train_model')
      ? 'training'
      : endpoint.startsWith('/load_model')
        ? 'load_model'
        : 'generation';
    return submitTask(db.pool, { ownerId, endpoint, kind, input, publicUrl: PUBLIC_URL, maxAttempts, id });
  }

  async function settled(id: string, ownerId = owner): Promise<TaskRecord> {
    return eventually(async () => {
      const task = await getTaskForOwner(db.pool, ownerId, id);
      return task && (task.state === 'succeeded' || task.state === 'failed') ? task : undefined;
    });
  }

  /** As the API does: the model row first, under the id its task will have. */
  async function registerModel(modelId: string, taskId: string): Promise<void> {
    await db.pool.query(
      `INSERT INTO models (owner_id, model_id, model_name, base_model, model_type, task_id)
       VALUES ($1, $2, 'mine', 'sdxl', 'lora', $3)`,
      [owner, modelId, taskId],
    );
  }

  const keyOf = (url: string) => url.slice(`${PUBLIC_URL}/files/`.length);

  it('is ready once its engines have started, not before', async () => {
    let loaded: () => void = () => {};
    const engine = Object.assign(fakeEngine('slow-start', ['/sd/text2image/v1']), {
      start: () =>
        new Promise<void>((resolve) => {
          loaded = resolve;
        }),
    });
    const { worker } = run([engine]);
    let ready = false;
    void worker.ready.then(() => {
      ready = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ready).toBe(false);
    loaded();
    await worker.ready;
    expect(ready).toBe(true);
  });

  it('runs a task on its engine and answers SUCCESS with links to the stored images', async () => {
    const engine = fakeEngine('fake', ['/sd/text2image/v1']);
    run([engine]);
    const { id, seed } = await submit('/sd/text2image/v1', {
      prompt: 'fox',
      samples: 2,
      width: 96,
      height: 80,
      seed: -1,
    });
    const task = await settled(id);
    const body = taskStatusBody(task, PUBLIC_URL);
    expect(body.status).toBe('SUCCESS');
    const urls = body.download_urls as string[];
    expect(urls).toHaveLength(2);
    for (const url of urls) {
      const blob = (await store.get(keyOf(url)))!;
      expect(await sharp(blob.data).metadata()).toMatchObject({ format: 'png', width: 96, height: 80 });
    }
    expect(engine.jobs[0]!.seed).toBe(seed);
    expect(task.result?.meta).toMatchObject({ seed, engine: 'fake', drawn_by: 'fake' });
    const rows = await db.pool.query('SELECT download_url FROM images WHERE task_id = $1 AND owner_id = $2', [
      id,
      owner,
    ]);
    expect(rows.rows.map((r) => r.download_url).sort()).toEqual([...urls].sort());
  });

  it('fills the links it returned at submission for queued_image_urls', async () => {
    run([fakeEngine('fake', ['/sd/text2image/v1'])]);
    const { id, outputUrls } = await submit('/sd/text2image/v1', {
      prompt: 'fox',
      samples: 2,
      queued_image_urls: true,
      file_prefix: 'fox-',
    });
    const task = await settled(id);
    expect(taskStatusBody(task, PUBLIC_URL).download_urls).toEqual(outputUrls);
    for (const url of outputUrls!) expect(await store.get(keyOf(url))).not.toBeNull();
  });

  it('carries the single output inline when base64 is asked', async () => {
    run([fakeEngine('fake', ['/sd/text2image/v1'])]);
    const { id } = await submit('/sd/text2image/v1', { prompt: 'fox', samples: 1, base64: true });
    const body = taskStatusBody(await settled(id), PUBLIC_URL);
    const stored = (await store.get(keyOf((body.download_urls as string[])[0]!)))!;
    expect(body.image).toBe(stored.data.toString('base64'));
  });

  it('answers image null where base64 was not asked on a sync-shaped endpoint', async () => {
    run([fakeEngine('fake', ['/sd/text2image/v1'])]);
    const { id } = await submit('/sd/text2image/v1', { prompt: 'fox', base64: false });
    expect(taskStatusBody(await settled(id), PUBLIC_URL).image).toBeNull();
  });

  it('fetches input images over HTTP and hands them to the engine', async () => {
    const engine = fakeEngine('fake', ['/sd/image2image/v1']);
    run([engine]);
    const { id } = await submit('/sd/image2image/v1', {
      prompt: 'fox',
      init_image: `${imagesUrl}/photo.png`,
    });
    expect((await settled(id)).state).toBe('succeeded');
    expect(engine.jobs[0]!.images.init_image).toMatchObject({
      width: 120,
      height: 90,
      contentType: 'image/png',
    });
  });

  it('fails at once with an error naming the field when an input image cannot be fetched', async () => {
    const engine = fakeEngine('fake', ['/sd/image2image/v1']);
    run([engine]);
    const { id } = await submit('/sd/image2image/v1', {
      prompt: 'fox',
      init_image: `${imagesUrl}/missing.png`,
    });
    const task = await settled(id);
    expect(taskStatusBody(task, PUBLIC_URL)).toEqual({
      status: 'FAILURE',
      error: 'init_image: server answered HTTP 404',
    });
    expect(task.attempts).toBe(1);
    expect(engine.jobs).toHaveLength(0);
  });

  it('fails with "no engine serves <pipeline>" when no configured engine serves it', async () => {
    run([fakeEngine('fake', ['/sd/text2image/v1'])]);
    const { id } = await submit('/bgremover/v1', { init_image: `${imagesUrl}/photo.png` });
    const task = await settled(id);
    expect(task.error).toBe('no engine serves /bgremover/v1');
    expect(task.attempts).toBe(1);
  });

  it('retries an engine crash with backoff, then fails with the last error', async () => {
    let calls = 0;
    const engine = fakeEngine('fake', ['/sd3/v1'], async () => {
      calls += 1;
      throw new Error(`CUDA out of memory (call ${calls})`);
    });
    run([engine]);
    const { id } = await submit('/sd3/v1', { prompt: 'fox' }, owner, 3);
    const task = await settled(id);
    expect(task.attempts).toBe(3);
    expect(task.error).toBe('engine error: CUDA out of memory (call 3)');
  });

  it('aborts an attempt that outruns its time limit, and retries it', async () => {
    let calls = 0;
    const engine = fakeEngine('stuck', ['/photomaker/v1'], async (_job, ctx) => {
      calls += 1;
      if (calls === 1) {
        await new Promise((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))),
        );
      }
      return { images: [await png(16, 16)] };
    });
    run([engine], { attemptTimeoutMs: 300, imageFields: () => [] });
    const task = await settled((await submit('/photomaker/v1', { prompt: 'fox' })).id);
    expect([task.state, task.attempts]).toEqual(['succeeded', 2]);
  });

  it('fails with the time limit as its error once every attempt ran out of time', async () => {
    const engine = fakeEngine('stuck', ['/instamodel/v1'], async (_job, ctx) => {
      await new Promise((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))),
      );
      return { images: [] };
    });
    run([engine], { attemptTimeoutMs: 200, imageFields: () => [] });
    const task = await settled((await submit('/instamodel/v1', { prompt: 'fox' }, owner, 2)).id);
    expect([task.attempts, task.error]).toEqual([2, 'engine error: the attempt took longer than 0.2 s']);
  });

  it('succeeds when a retry succeeds', async () => {
    let calls = 0;
    const engine = fakeEngine('fake', ['/sd3_5/v1'], async () => {
      calls += 1;
      if (calls === 1) throw new Error('connection reset');
      return { images: [await png(32, 32)] };
    });
    run([engine]);
    const task = await settled((await submit('/sd3_5/v1', { prompt: 'fox' })).id);
    expect([task.state, task.attempts, task.error]).toEqual(['succeeded', 2, null]);
  });

  it("fails at once on the engine's input error, with its message", async () => {
    const engine = fakeEngine('fake', ['/faceswap/v1'], async () => {
      throw new EngineInputError('input_face: no face found in the image');
    });
    run([engine], { imageFields: () => [] });
    const task = await settled((await submit('/faceswap/v1', {})).id);
    expect([task.attempts, task.error]).toEqual([1, 'input_face: no face found in the image']);
  });

  it('fails before the engine runs when a preflight check refuses the input', async () => {
    const engine = fakeEngine('fake', ['/modelswitch/v1']);
    const preflight = {
      pipelines: ['/modelswitch/v1'],
      async check() {
        throw new EngineInputError('input_image: no person found in the image');
      },
    };
    run([engine], { preflights: [preflight], imageFields: () => [] });
    const task = await settled((await submit('/modelswitch/v1', { prompt: 'fox' })).id);
    expect([task.attempts, task.error]).toEqual([1, 'input_image: no person found in the image']);
    expect(engine.jobs).toHaveLength(0);
  });

  it('checks outputs with the safety checker when the request asks, and fails an unsafe one', async () => {
    const checked: number[] = [];
    const safety: SafetyChecker = {
      async classify(image): Promise<SafetyVerdict> {
        checked.push(image.width);
        return image.width === 66
          ? { unsafe: true, scores: { Porn: 0.93, Neutral: 0.05, Sexy: 0.02 } }
          : { unsafe: false, scores: { Neutral: 0.99 } };
      },
    };
    run([fakeEngine('fake', ['/sdxl/image2image/v1'])], { safety, imageFields: () => [] });
    const unsafe = await submit('/sdxl/image2image/v1', { prompt: 'x', width: 66, safety_checker: true });
    const safe = await submit('/sdxl/image2image/v1', { prompt: 'x', width: 65, safety_checker: true });
    const unchecked = await submit('/sdxl/image2image/v1', { prompt: 'x', width: 66, safety_checker: false });
    expect((await settled(unsafe.id)).error).toBe(
      'safety_checker: output image 1 of 1 was classified unsafe (Porn 0.93, Neutral 0.05)',
    );
    expect((await settled(safe.id)).state).toBe('succeeded');
    expect((await settled(unchecked.id)).state).toBe('succeeded');
    expect(checked.sort()).toEqual([65, 66]);
  });

  it('fails a task that asks for the safety check on a worker without a checker, before the engine runs', async () => {
    const engine = fakeEngine('fake', ['/sdxl/image2image/v1']);
    run([engine], { imageFields: () => [] });
    const asked = await submit('/sdxl/image2image/v1', { prompt: 'x', safety_checker: true });
    const notAsked = await submit('/sdxl/image2image/v1', { prompt: 'x', safety_checker: false });
    const failed = await settled(asked.id);
    expect([failed.attempts, failed.error]).toEqual([
      1,
      'safety_checker: this worker has no safety checker (enable the cpu engine in IMAGEGEN_ENGINES)',
    ]);
    expect((await settled(notAsked.id)).state).toBe('succeeded');
    expect(engine.jobs).toHaveLength(1);
  });

  it('reclaims the task of a worker that stopped renewing its lease, and fences the stale worker out', async () => {
    const { id } = await submit('/generate/v1', { prompt: 'fox' });
    // A worker that claims and then goes silent, as a killed process would.
    const claimed = await claimTask(db.pool, {
      leaseOwner: 'dead-worker/1',
      routes: ['shared'],
      leaseMs: 300,
    });
    expect(claimed?.id).toBe(id);
    run([fakeEngine('fake', ['/generate/v1'])], { leaseMs: 1_000 });
    const task = await settled(id);
    expect([task.state, task.attempts]).toEqual(['succeeded', 2]);
    const stale = await completeTask(db.pool, {
      id,
      leaseOwner: 'dead-worker/1',
      result: {},
      outputKeys: [],
    });
    expect(stale).toBeNull();
  });

  it('writes the webhook with the final status body, then the task id and path, inside the completing transaction', async () => {
    run([fakeEngine('fake', ['/logo/v1'])], { enqueueWebhook });
    const ok = await submit('/logo/v1', { prompt: 'fox', webhook: 'https://hooks.example/ok' });
    const bad = await submit('/bgremover/v1', { webhook: 'https://hooks.example/bad', init_image: 'x' });
    const okTask = await settled(ok.id);
    const badTask = await settled(bad.id);
    const { rows } = await db.pool.query<{ task_id: string; url: string; payload: string }>(
      'SELECT task_id, url, payload FROM webhook_deliveries ORDER BY url DESC',
    );
    const bodies = rows.map((row) => JSON.parse(row.payload) as Record<string, unknown>);
    expect(rows.map((row) => [row.task_id, row.url])).toEqual([
      [ok.id, 'https://hooks.example/ok'],
      [bad.id, 'https://hooks.example/bad'],
    ]);
    expect(bodies).toEqual([
      { ...taskStatusBody(okTask, PUBLIC_URL), id: ok.id, path: '/logo/v1' },
      { ...taskStatusBody(badTask, PUBLIC_URL), id: bad.id, path: '/bgremover/v1' },
    ]);
    // The status fields first, in the status body's order: a receiver of the status reads it unchanged.
    expect(Object.keys(bodies[0]!)).toEqual(['status', 'download_urls', 'image_url', 'id', 'path']);
    expect(Object.keys(bodies[1]!)).toEqual(['status', 'error', 'id', 'path']);
  });

  it("writes an engine's progress every progressFlushMs, between the lease's renewals", async () => {
    let step: ((fraction: number) => void) | undefined;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const engine = fakeEngine('stepper', ['/sd/text2image/v1'], async (_job, ctx) => {
      step = (fraction) => ctx.progress(fraction, `at ${fraction}`);
      await released;
      return { images: [] };
    });
    const { id } = await submit('/sd/text2image/v1', { prompt: 'p' });
    // A renewal is 200 s away: only the progress flush can write.
    run([engine], { leaseMs: 600_000, progressFlushMs: 20 });
    const progress = async () => (await getTaskForOwner(db.pool, owner, id))?.progress;
    await eventually(async () => (step ? true : undefined));
    for (const fraction of [0.25, 0.5]) {
      step!(fraction);
      await eventually(async () => ((await progress()) === fraction ? true : undefined));
    }
    release();
    expect((await settled(id)).state).toBe('succeeded');
  });

  it('maps a training run onto queued, initialising, running and completed, with its model', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reportProgress: (() => void) | undefined;
    const engine = fakeEngine('trainer', ['/train_model/v1'], async (_job, ctx) => {
      await new Promise<void>((resolve) => {
        reportProgress = () => {
          ctx.progress(0.5, 'step 150 of 300');
          resolve();
        };
      });
      await released;
      return { images: [] };
    });
    const id = randomUUID();
    await registerModel('abc123', id);
    await submit('/train_model/v1', { model_name: 'me', images: [] }, owner, undefined, id);
    const status = async () => trainingStatus((await getTaskForOwner(db.pool, owner, id))!);
    expect(await status()).toBe('queued');
    run([engine], { imageFields: () => [] });
    await eventually(async () => ((await status()) === 'initialising' ? true : undefined));
    await eventually(async () => (reportProgress ? true : undefined));
    reportProgress!();
    await eventually(async () => ((await status()) === 'running' ? true : undefined));
    const running = (await getTaskForOwner(db.pool, owner, id))!;
    expect([running.progress, running.progressMessage]).toEqual([0.5, 'step 150 of 300']);
    release();
    const body = taskStatusBody(await settled(id), PUBLIC_URL);
    expect(body).toMatchObject({ status: 'completed', model_id: 'abc123' });
    expect(body.training_duration_seconds).toBeGreaterThan(0);
    const model = await db.pool.query('SELECT status FROM models WHERE model_id = $1', ['abc123']);
    expect(model.rows[0].status).toBe('ready');
  });

  it('completes load_model by marking its model ready when no engine loads weights', async () => {
    run([fakeEngine('fake', ['/sd/text2image/v1'])]);
    const id = randomUUID();
    await registerModel('def456', id);
    await submit('/load_model/v1', { model_name: 'mine' }, owner, undefined, id);
    expect(taskStatusBody(await settled(id), PUBLIC_URL)).toEqual({ status: 'SUCCESS', model_id: 'def456' });
  });

  it('marks the model failed when its load_model task fails', async () => {
    const loader = fakeEngine('loader', ['/load_model/v1'], async () => {
      throw new EngineInputError('model_url: not a safetensors file');
    });
    run([loader], { imageFields: () => [] });
    const id = randomUUID();
    await registerModel('bad789', id);
    await submit('/load_model/v1', { model_name: 'broken' }, owner, undefined, id);
    expect(taskStatusBody(await settled(id), PUBLIC_URL)).toEqual({
      status: 'FAILURE',
      error: 'model_url: not a safetensors file',
    });
    const model = await db.pool.query('SELECT status FROM models WHERE model_id = $1', ['bad789']);
    expect(model.rows[0].status).toBe('failed');
  });

  it('releases a task that outlives the drain at shutdown, without counting the attempt', async () => {
    let started = false;
    const engine = fakeEngine('slow', ['/relight/v1'], async (_job, ctx) => {
      started = true;
      await new Promise((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
      );
      return { images: [] };
    });
    const { worker, stop } = run([engine], { drainMs: 100, imageFields: () => [] });
    const { id } = await submit('/relight/v1', { prompt: 'fox' });
    await eventually(async () => (started ? true : undefined));
    stop.abort();
    await worker.stopped;
    const task = (await getTaskForOwner(db.pool, owner, id))!;
    expect([task.state, task.attempts]).toEqual(['queued', 0]);
    run([fakeEngine('fake', ['/relight/v1'])], { imageFields: () => [] });
    expect((await settled(id)).state).toBe('succeeded');
  });

  it('lets a task finish during the drain at shutdown', async () => {
    let finish: (() => void) | undefined;
    const engine = fakeEngine('slow', ['/outpainting/v1'], async () => {
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
      return { images: [await png(16, 16)] };
    });
    const { worker, stop } = run([engine], { drainMs: 5_000, imageFields: () => [] });
    const { id } = await submit('/outpainting/v1', { prompt: 'fox' });
    await eventually(async () => (finish ? true : undefined));
    stop.abort();
    finish!();
    await worker.stopped;
    expect((await getTaskForOwner(db.pool, owner, id))!.state).toBe('succeeded');
  });

  it('serves an unregistered server id from the shared pool, and marks it offline when it stops', async () => {
    const { worker, stop } = run([fakeEngine('fake', ['/generate/v3'])], { serverId: 'gpu-new' });
    const { id } = await submit('/generate/v3', { prompt: 'fox' });
    expect((await settled(id)).state).toBe('succeeded');
    stop.abort();
    await worker.stopped;
    const server = await db.pool.query('SELECT owner_id, status FROM servers WHERE id = $1', ['gpu-new']);
    expect(server.rows).toEqual([{ owner_id: null, status: 'offline' }]);
  });

  it('listens again after its notification connection is cut, and wakes without polling', async () => {
    const engine = fakeEngine('fake', ['/generate/v2']);
    run([engine], { pollMs: 60_000 });
    const first = await submit('/generate/v2', { prompt: 'fox' });
    expect((await settled(first.id)).state).toBe('succeeded');
    const cut = await db.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND query = 'LISTEN imagegen_tasks'`,
    );
    expect(cut.rowCount).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const second = await submit('/generate/v2', { prompt: 'fox' });
    const started = Date.now();
    expect((await settled(second.id)).state).toBe('succeeded');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("serves a server's routed tasks only on that server's worker", async () => {
    const enterprise = await createOwner(db.pool, 'EPBASIC');
    await createServer(db.pool, 'gpu-1', enterprise);
    const routed = await submit('/sdxl/text2image/v1', { prompt: 'fox', server_id: 'gpu-1' }, enterprise);
    const pooled = await submit('/sdxl/text2image/v1', { prompt: 'fox', server_id: 'any' }, enterprise);
    const shared = await submit('/sdxl/text2image/v1', { prompt: 'fox' }, enterprise);
    const sharedEngine = fakeEngine('shared', ['/sdxl/text2image/v1']);
    run([sharedEngine]);
    expect((await settled(shared.id, enterprise)).result?.meta?.engine).toBe('shared');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await getTaskForOwner(db.pool, enterprise, routed.id))!.state).toBe('queued');
    expect((await getTaskForOwner(db.pool, enterprise, pooled.id))!.state).toBe('queued');
    run([fakeEngine('dedicated', ['/sdxl/text2image/v1'])], { serverId: 'gpu-1' });
    expect((await settled(routed.id, enterprise)).result?.meta?.engine).toBe('dedicated');
    expect((await settled(pooled.id, enterprise)).result?.meta?.engine).toBe('dedicated');
    const server = await db.pool.query('SELECT status, last_seen_at FROM servers WHERE id = $1', ['gpu-1']);
    expect(server.rows[0].status).toBe('online');
    expect(server.rows[0].last_seen_at).toBeInstanceOf(Date);
  });
  it('keeps as many attempts running as its engines declare, when no concurrency is set', async () => {
    const waiting: (() => void)[] = [];
    const engine = {
      ...fakeEngine('gpus', ['/generate/v2'], async () => {
        await new Promise<void>((resolve) => waiting.push(resolve));
        return { images: [await png(8, 8)] };
      }),
      capacity: 3,
    };
    run([engine]);
    const ids = await Promise.all([1, 2, 3, 4, 5].map(() => submit('/generate/v2', { prompt: 'fox' })));
    await eventually(async () => (waiting.length === 3 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(waiting).toHaveLength(3);
    waiting.shift()!();
    await eventually(async () => (waiting.length === 3 ? true : undefined));
    while (waiting.length > 0 || engine.jobs.length < 5) {
      waiting.shift()?.();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const { id } of ids) expect((await settled(id)).state).toBe('succeeded');
  });

  it("serves its engine's servers as enterprise server ids, and tells the engine where each task may run", async () => {
    const acme = await createOwner(db.pool, 'EPBASIC');
    await createServer(db.pool, 'comfy-b', acme);
    const server = (name: string) => ({
      name,
      url: `http://${name}:8188`,
      state: 'up' as const,
      queue: 0,
      inFlight: 0,
      checkpoint: null,
    });
    const engine = {
      ...fakeEngine('gpus', ['/sdxl/text2image/v1']),
      servers: () => [server('comfy-a'), server('comfy-b'), server('comfy-b')],
    };
    const routed = await submit('/sdxl/text2image/v1', { prompt: 'routed', server_id: 'comfy-b' }, acme);
    const pooled = await submit('/sdxl/text2image/v1', { prompt: 'pooled', server_id: 'any' }, acme);
    const shared = await submit('/sdxl/text2image/v1', { prompt: 'shared' });
    const { worker, stop } = run([engine]);
    expect((await settled(routed.id, acme)).state).toBe('succeeded');
    expect((await settled(pooled.id, acme)).state).toBe('succeeded');
    expect((await settled(shared.id)).state).toBe('succeeded');
    const placed = Object.fromEntries(engine.jobs.map((job) => [job.input.prompt, job.servers]));
    expect(placed).toEqual({ routed: ['comfy-b'], pooled: ['comfy-b'], shared: ['comfy-a'] });
    const rows = async () =>
      (await db.pool.query("SELECT id, owner_id, status FROM servers WHERE id LIKE 'comfy-%' ORDER BY id"))
        .rows;
    expect(await rows()).toEqual([
      { id: 'comfy-a', owner_id: null, status: 'online' },
      { id: 'comfy-b', owner_id: acme, status: 'online' },
    ]);
    stop.abort();
    await worker.stopped;
    expect((await rows()).map((row) => row.status)).toEqual(['offline', 'offline']);
  });
});
