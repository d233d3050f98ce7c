import { endpointByPath } from '@imagegen/contract';
import { createEngineRegistry } from '@imagegen/engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  getModel,
  getTaskForOwner,
  ModelNotFoundError,
  RoutingError,
  startWorker,
  submitModelTask,
} from '../../src/tasks/index.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
import {
  createOwner,
  createServer,
  eventually,
  FakeBlobStore,
  FakeImageFetcher,
  fakeEngine,
} from '../support/fakes.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const PUBLIC_URL = 'http://api.test';
const LOAD = endpointByPath('/load_model/v1')!.example as Record<string, unknown>;
const TRAIN = endpointByPath('/train_model/v1')!.example as Record<string, unknown>;

describe('model tasks', () => {
  let db: TestDatabase;
  let owner: string;
  let enterprise: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    owner = await createOwner(db.pool, 'STANDARD');
    enterprise = await createOwner(db.pool, 'EPPREMIUM');
    await createServer(db.pool, 'gpu-7', enterprise);
  });
  afterAll(() => db.drop());

  const count = async (table: 'tasks' | 'models' | 'model_syncs') =>
    Number((await db.pool.query(`SELECT count(*) FROM ${table}`)).rows[0].count);
  const load = (ownerId: string, input: Record<string, unknown> = {}) =>
    submitModelTask(db.pool, {
      ownerId,
      endpoint: '/load_model/v1',
      kind: 'load_model',
      input: { ...LOAD, server_id: undefined, ...input },
      publicUrl: PUBLIC_URL,
    });
  const sync = (ownerId: string, input: Record<string, unknown>) =>
    submitModelTask(db.pool, {
      ownerId,
      endpoint: '/sync_model/v1',
      kind: 'load_model',
      input,
      publicUrl: PUBLIC_URL,
    });
  const modelOfTask = async (taskId: string) =>
    (
      await db.pool.query(
        'SELECT model_id, status, trained_model, model_type FROM models WHERE task_id = $1',
        [taskId],
      )
    ).rows;
  const syncsOf = async (modelId: string) =>
    (
      await db.pool.query(
        `SELECT s.server_id, s.synced_at FROM model_syncs s JOIN models m ON m.id = s.model_id
          WHERE m.model_id = $1 ORDER BY s.server_id NULLS FIRST`,
        [modelId],
      )
    ).rows as { server_id: string | null; synced_at: Date }[];

  it('queues load_model with its model row, registered loading under the task id', async () => {
    const { id } = await load(owner, { model_name: 'portrait-lora' });
    expect((await getTaskForOwner(db.pool, owner, id))?.state).toBe('queued');
    const rows = await modelOfTask(id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'loading', trained_model: false });
    expect(rows[0].model_id).toMatch(/^[0-9a-f]{32}$/);
    expect(await getModel(db.pool, owner, rows[0].model_id)).toMatchObject({ model_name: 'portrait-lora' });
  });

  it('queues train_model with the LoRA it will produce', async () => {
    const { id } = await submitModelTask(db.pool, {
      ownerId: owner,
      endpoint: '/train_model/v1',
      kind: 'training',
      input: TRAIN,
      publicUrl: PUBLIC_URL,
    });
    expect(await modelOfTask(id)).toMatchObject([
      { status: 'loading', trained_model: true, model_type: 'lora' },
    ]);
  });

  it('writes neither task nor model when routing refuses the submission', async () => {
    const [tasks, models] = [await count('tasks'), await count('models')];
    await expect(load(owner, { server_id: 'any' })).rejects.toMatchObject({ status: 403 });
    await expect(load(owner, { server_id: 'any' })).rejects.toBeInstanceOf(RoutingError);
    expect([await count('tasks'), await count('models')]).toEqual([tasks, models]);
  });

  it('syncs to a named server: routed there, and recorded', async () => {
    const { id: loadId } = await load(enterprise);
    const [model] = await modelOfTask(loadId);
    const { id } = await sync(enterprise, { model_id: model.model_id, server_id: 'gpu-7' });
    expect(await getTaskForOwner(db.pool, enterprise, id)).toMatchObject({
      targetServer: 'gpu-7',
      targetPool: `owner:${enterprise}`,
    });
    expect((await syncsOf(model.model_id)).map((s) => s.server_id)).toEqual(['gpu-7']);
  });

  it('syncs without server_id to the shared servers, on any plan, recorded once per destination', async () => {
    const { id: loadId } = await load(owner);
    const [model] = await modelOfTask(loadId);
    const first = await sync(owner, { model_id: model.model_id });
    expect(await getTaskForOwner(db.pool, owner, first.id)).toMatchObject({
      targetServer: null,
      targetPool: 'shared',
    });
    const [recorded] = await syncsOf(model.model_id);
    expect(recorded?.server_id).toBeNull();

    await sync(owner, { model_id: model.model_id, server_id: '' });
    const again = await syncsOf(model.model_id);
    expect(again).toHaveLength(1);
    expect(again[0]!.synced_at.getTime()).toBeGreaterThan(recorded!.synced_at.getTime());
  });

  it("refuses to sync a model that is not the caller's, and queues nothing", async () => {
    const { id: loadId } = await load(enterprise);
    const [model] = await modelOfTask(loadId);
    const [tasks, syncs] = [await count('tasks'), await count('model_syncs')];
    const refused = sync(owner, { model_id: model.model_id });
    await expect(refused).rejects.toBeInstanceOf(ModelNotFoundError);
    await expect(sync(owner, { model_id: 'missing' })).rejects.toMatchObject({
      status: 404,
      message: 'Model not found',
    });
    expect([await count('tasks'), await count('model_syncs')]).toEqual([tasks, syncs]);
  });

  it("marks the model with the engine's typed model output, and reads nothing from meta", async () => {
    const trainer = fakeEngine('trainer', ['/train_model/v1'], async () => ({
      images: [],
      model: { tags: ['sandbox', ''], descriptionNote: '[placeholder]' },
      meta: { model_tags: ['from-meta'], model_description: 'from meta' },
    }));
    const stop = new AbortController();
    const worker = startWorker({
      pool: db.pool,
      engines: createEngineRegistry([trainer], { enabled: ['trainer'], pinned: {} }),
      fetcher: new FakeImageFetcher(),
      store: new FakeBlobStore(),
      publicUrl: PUBLIC_URL,
      signal: stop.signal,
      imageFields: () => [],
      pollMs: 100,
    });
    try {
      const trainOwner = await createOwner(db.pool);
      const { id } = await submitModelTask(db.pool, {
        ownerId: trainOwner,
        endpoint: '/train_model/v1',
        kind: 'training',
        input: { ...TRAIN, description: 'My face', tags: 'portrait' },
        publicUrl: PUBLIC_URL,
      });
      const done = await eventually(async () => {
        const task = await getTaskForOwner(db.pool, trainOwner, id);
        return task?.state === 'succeeded' || task?.state === 'failed' ? task : undefined;
      });
      expect(done.state).toBe('succeeded');
      const model = await getModel(db.pool, trainOwner, String(done.result?.model_id));
      expect(model).toMatchObject({
        status: 'ready',
        tags: 'portrait,sandbox',
        description: '[placeholder] My face',
      });
    } finally {
      stop.abort();
      await worker.stopped;
    }
  });
});

describe('/sync_model/v1 without server_id', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness();
  });
  afterAll(() => api.close());

  it('syncs a model of a plan without servers to the shared servers, and completes', async () => {
    const loaded = await api.request('POST', '/load_model/v1', { json: { ...LOAD, server_id: undefined } });
    expect(loaded.status, JSON.stringify(loaded.body)).toBe(200);
    const { model_id } = await api.settle(
      `/load_model/v1/status/${(loaded.body as { id: string }).id}`,
      api.alice.key,
    );
    const synced = await api.request('POST', '/sync_model/v1', { json: { model_id } });
    expect(synced.status, JSON.stringify(synced.body)).toBe(200);
    const done = await api.settle(
      `/sync_model/v1/status/${(synced.body as { id: string }).id}`,
      api.alice.key,
    );
    expect(done).toEqual({ status: 'SUCCESS', model_id });
  });
});
