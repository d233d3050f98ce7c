import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { type FakeComfyUI, startFakeComfyUI } from '@imagegen/comfyui-fake';
import { modelFileRemoverFromEnv } from '@imagegen/engine-comfyui';
import { COMPILERS, createComfyClient, createComfyuiEngine } from '@imagegen/engine-comfyui/engine';
import { createEngineRegistry, type Engine } from '@imagegen/engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { upsertServer } from '../../src/auth/sql/upsertServer.ts';
import { createModelFetcher } from '../../src/fetch/model-fetcher.ts';
import { apiCalls } from '../support/api-calls.ts';
import { type LoopbackApi, startLoopbackApi } from '../support/loopback.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/**
 * Custom models on the comfyui engine through the API: load_model downloads `model_url` from a
 * loopback file server into a temporary COMFYUI_MODELS_DIR that the fake ComfyUI lists, and a
 * generation naming the model's id runs a graph that loads `<model_id>.<ext>`. Then every way a
 * load or a use can go wrong, each answered with a clear error and no file left behind.
 *
 * Two fakes: `gpu-a` serves the shared pool and reads the shared folder; `big`, an enterprise
 * server, reads a folder of its own, filled only by sync_model.
 */

/** MODEL_MAX_BYTES of this engine: small, so the cap is reached with a test-sized file. */
const MAX_BYTES = 64 * 1024;
const SMALL = Buffer.from(Array.from({ length: 4096 }, (_, n) => (n * 7) % 256));
/** The slow file: 48 chunks of 1 KiB, one every 40 ms, with its Content-Length. */
const SLOW_CHUNKS = 48;

let db: TestDatabase;
let api: LoopbackApi;
let engine: Engine;
let files: Server;
let filesUrl: string;
let sharedDir: string;
let bigDir: string;
let alice: string;
let bob: string;
let acme: string;
/** When set, the engine's next temporary model file fails with ENOSPC after its first chunk. */
let diskFull = false;
/** How often /flaky.safetensors was asked for. */
let flakyServed = 0;
const fakes: Record<'gpu-a' | 'big', FakeComfyUI> = {} as never;

function modelFileServer(): Server {
  return createServer((request, response) => {
    const route = (request.url ?? '').split('?')[0];
    if (route === '/small.safetensors') {
      response.writeHead(200, { 'content-length': String(SMALL.length) }).end(SMALL);
    } else if (route === '/declared-huge.safetensors') {
      response.writeHead(200, { 'content-length': String(MAX_BYTES * 4) }).end();
    } else if (route === '/endless.safetensors') {
      // No Content-Length: the cap must be found while streaming.
      response.writeHead(200);
      const chunk = Buffer.alloc(8192, 1);
      const timer = setInterval(() => response.write(chunk), 1);
      response.on('close', () => clearInterval(timer));
    } else if (route === '/slow.safetensors') {
      response.writeHead(200, { 'content-length': String(SLOW_CHUNKS * 1024) });
      let sent = 0;
      const timer = setInterval(() => {
        response.write(Buffer.alloc(1024, 2));
        if (++sent === SLOW_CHUNKS) {
          clearInterval(timer);
          response.end();
        }
      }, 40);
      response.on('close', () => clearInterval(timer));
    } else if (route === '/flaky.safetensors') {
      // The first answer breaks off halfway (a network failure: retried); the next is whole.
      response.writeHead(200, { 'content-length': String(SMALL.length) });
      if (flakyServed++ === 0) response.write(SMALL.subarray(0, 2048), () => response.destroy());
      else response.end(SMALL);
    } else if (route === '/to-private') {
      response.writeHead(302, { location: 'http://10.0.0.1/model.safetensors' }).end();
    } else {
      response.writeHead(404).end('not here');
    }
  });
}

/** A write stream on a disk that fills up: the file is created, then the first write fails. */
function fullDisk(file: string): Writable {
  const real = createWriteStream(file, { flags: 'wx' });
  return new Writable({
    write(chunk, _encoding, done) {
      real.write(chunk, () =>
        done(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })),
      );
    },
    destroy(error, done) {
      real.close(() => done(error));
    },
  });
}

beforeAll(async () => {
  sharedDir = await mkdtemp(path.join(tmpdir(), 'imagegen-models-shared-'));
  bigDir = await mkdtemp(path.join(tmpdir(), 'imagegen-models-big-'));
  fakes['gpu-a'] = await startFakeComfyUI({ modelsDir: sharedDir, stepDelayMs: 1, name: 'gpu-a' });
  fakes.big = await startFakeComfyUI({ modelsDir: bigDir, stepDelayMs: 1, name: 'big' });
  files = modelFileServer();
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;

  db = await createTestDatabase();
  alice = (await createOwner(db.pool, { name: 'models-alice', plan: 'UNLIMITED' })).apiKey;
  bob = (await createOwner(db.pool, { name: 'models-bob', plan: 'UNLIMITED' })).apiKey;
  const acmeOwner = await createOwner(db.pool, { name: 'models-acme', plan: 'EPPREMIUM' });
  acme = acmeOwner.apiKey;
  await upsertServer(db.pool, { id: 'big', ownerId: acmeOwner.owner.id });

  engine = createComfyuiEngine({
    servers: Object.values(fakes).map((fake) =>
      createComfyClient({ url: fake.url, name: fake.name, requestTimeoutMs: 2_000 }),
    ),
    compilers: COMPILERS,
    checkpoints: { 'sd1.5': 'random-sd15.safetensors' },
    modelFiles: {
      folders: { shared: sharedDir, byServer: { big: bigDir } },
      maxBytes: MAX_BYTES,
      // Loopback stands for the public host; every other private address is still refused.
      fetch: createModelFetcher({ allowPrivate: true }),
      openWrite: (file) => (diskFull ? fullDisk(file) : createWriteStream(file, { flags: 'wx' })),
    },
  });
  const engines = createEngineRegistry([engine], { enabled: ['comfyui'], pinned: {} });
  api = await startLoopbackApi({
    pool: db.pool,
    engines,
    worker: { attemptTimeoutMs: 20_000 },
    removeModelFiles: modelFileRemoverFromEnv({
      COMFYUI_URLS: `gpu-a=${fakes['gpu-a'].url},big=${fakes.big.url}`,
      COMFYUI_MODELS_DIR: `${sharedDir},big=${bigDir}`,
    })!,
  });
});

afterAll(async () => {
  await api?.close();
  await engine?.close?.();
  await Promise.all(Object.values(fakes).map((fake) => fake?.close()));
  await new Promise((resolve) => files?.close(resolve));
  await db?.drop();
  await Promise.all([sharedDir, bigDir].map((dir) => dir && rm(dir, { recursive: true, force: true })));
});

const { call, submit, settle } = apiCalls(() => api.url);

const LOAD = {
  model_name: 'a test model',
  pretrained_model_path: null,
  base_model: 'sd1.5',
  model_type: 'lora',
  description: '',
  // Links shown with the model, never fetched: this host does not exist.
  sample_images: ['https://images.example.com/sample.png'],
  visibility: 'private',
  model_extension: 'safetensors',
};

/** Loads `file` of the loopback server as a model; answers the final status and the task id. */
async function load(file: string, fields: Record<string, unknown> = {}, key = alice) {
  const id = await submit('/load_model/v1', { ...LOAD, model_url: `${filesUrl}/${file}`, ...fields }, key);
  return { id, status: await settle('/load_model/v1', id, key) };
}

async function loaded(file: string, fields: Record<string, unknown> = {}, key = alice): Promise<string> {
  const { status } = await load(file, fields, key);
  expect(status, JSON.stringify(status)).toMatchObject({ status: 'SUCCESS' });
  return String(status.model_id);
}

/** Every file under a models dir, as `folder/file`, hidden ones included. */
async function filesIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

const modelRow = async (taskId: string) =>
  (
    await db.pool.query<{ status: string; file_sha256: string | null; file_bytes: string | null }>(
      'SELECT status, file_sha256, file_bytes FROM models WHERE task_id = $1',
      [taskId],
    )
  ).rows[0];

/** The graphs a fake ran, as JSON text. */
async function historyOf(fake: FakeComfyUI): Promise<string> {
  return JSON.stringify(await (await fetch(`${fake.url}/history`)).json());
}

const TEXT2IMAGE = { prompt: 'a fox', negative_prompt: '', num_inference_steps: 2, width: 64, height: 64 };

describe('custom models on the comfyui engine', () => {
  it('downloads model_url into the folder of its type, named by its model id, with its sha256 recorded', async () => {
    const { id, status } = await load('small.safetensors');
    expect(status).toMatchObject({ status: 'SUCCESS' });
    const modelId = String(status.model_id);
    const file = path.join(sharedDir, 'loras', `${modelId}.safetensors`);
    expect(await readFile(file)).toEqual(SMALL);
    expect(await modelRow(id)).toEqual({
      status: 'ready',
      file_sha256: createHash('sha256').update(SMALL).digest('hex'),
      file_bytes: String(SMALL.length),
    });
    // Nothing else was left in the folder: no temporary file.
    expect((await filesIn(sharedDir)).filter((name) => name.includes(modelId))).toEqual([
      `loras/${modelId}.safetensors`,
    ]);
    // The servers reading the folder list it.
    expect(await (await fetch(`${fakes['gpu-a'].url}/models/loras`)).json()).toContain(
      `${modelId}.safetensors`,
    );
  });

  it("runs a generation whose model_id and lora_models name the owner's models: the graph loads their files", async () => {
    const checkpoint = await loaded('small.safetensors', { model_type: 'checkpoint', revision: 'fp16' });
    const lora = await loaded('small.safetensors');
    const embedding = await loaded('small.safetensors', { model_type: 'embedding' });
    const id = await submit(
      '/sd/text2image/v1',
      { ...TEXT2IMAGE, model_id: checkpoint, lora_models: [lora], embeddings: [embedding] },
      alice,
    );
    const status = await settle('/sd/text2image/v1', id, alice);
    expect(status, JSON.stringify(status)).toMatchObject({ status: 'SUCCESS' });
    const graphs = await historyOf(fakes['gpu-a']);
    expect(graphs).toContain(`"ckpt_name":"${checkpoint}.safetensors"`);
    expect(graphs).toContain(`"lora_name":"${lora}.safetensors"`);
    expect(graphs).toContain(`embedding:${embedding}.safetensors`);
  });

  it("refuses another owner's model id, naming the field", async () => {
    const checkpoint = await loaded('small.safetensors', { model_type: 'checkpoint', revision: 'fp16' });
    const lora = await loaded('small.safetensors');
    const asCheckpoint = await settle(
      '/sd/text2image/v1',
      await submit('/sd/text2image/v1', { ...TEXT2IMAGE, model_id: checkpoint }, bob),
      bob,
    );
    expect(asCheckpoint).toEqual({
      status: 'FAILURE',
      error: `model_id: '${checkpoint}' is not one of your loaded models`,
    });
    const asLora = await settle(
      '/sd/text2image/v1',
      await submit('/sd/text2image/v1', { ...TEXT2IMAGE, lora_models: [lora] }, bob),
      bob,
    );
    expect(asLora).toEqual({
      status: 'FAILURE',
      error: `lora_models: '${lora}' is not one of your loaded models`,
    });
  });

  it("draws an owner's checkpoint as its own family, and refuses a LoRA of another base model, naming the field", async () => {
    // An SD1.5 checkpoint on an SDXL path is drawn as SD1.5, as the built-in `sd1.5` id is.
    const checkpoint = await loaded('small.safetensors', { model_type: 'checkpoint', revision: 'fp16' });
    const drawn = await settle(
      '/sdxl/text2image/v1',
      await submit('/sdxl/text2image/v1', { ...TEXT2IMAGE, model_id: checkpoint }, alice),
      alice,
    );
    expect(drawn).toMatchObject({ status: 'SUCCESS' });
    // Its LoRAs must be of its base model.
    const lora = await loaded('small.safetensors', { base_model: 'sdxl' });
    const id = await submit(
      '/sdxl/text2image/v1',
      { ...TEXT2IMAGE, model_id: checkpoint, lora_models: [lora] },
      alice,
    );
    expect(await settle('/sdxl/text2image/v1', id, alice)).toEqual({
      status: 'FAILURE',
      error: `lora_models: model '${lora}' is a sdxl lora; this pipeline takes sd1.5 models`,
    });
  });

  it('fails a model the chosen server does not list, then runs it there once synced', async () => {
    const lora = await loaded('small.safetensors', {}, acme);
    const routed = { ...TEXT2IMAGE, lora_models: [lora], server_id: 'big' };
    const before = await settle('/sd/text2image/v1', await submit('/sd/text2image/v1', routed, acme), acme);
    expect(before).toEqual({ status: 'FAILURE', error: `model '${lora}' is not loaded on server big` });

    const sync = await submit('/sync_model/v1', { model_id: lora, server_id: 'big' }, acme);
    expect(await settle('/sync_model/v1', sync, acme)).toEqual({ status: 'SUCCESS', model_id: lora });
    expect(await readFile(path.join(bigDir, 'loras', `${lora}.safetensors`))).toEqual(SMALL);
    const after = await settle('/sd/text2image/v1', await submit('/sd/text2image/v1', routed, acme), acme);
    expect(after, JSON.stringify(after)).toMatchObject({ status: 'SUCCESS' });
    expect(await historyOf(fakes.big)).toContain(`"lora_name":"${lora}.safetensors"`);
  });

  it('refuses a file above MODEL_MAX_BYTES, declared or streamed, leaving no file and a failed row', async () => {
    for (const file of ['declared-huge.safetensors', 'endless.safetensors']) {
      const { id, status } = await load(file);
      expect(status).toEqual({
        status: 'FAILURE',
        error: 'model_url: the file is larger than the MODEL_MAX_BYTES limit of 64 KiB',
      });
      expect((await modelRow(id))?.status).toBe('failed');
    }
    expect((await filesIn(sharedDir)).filter((name) => name.endsWith('.part'))).toEqual([]);
  });

  it('fails on an answer other than 200, and on a redirect to a private address', async () => {
    expect((await load('missing.safetensors')).status).toEqual({
      status: 'FAILURE',
      error: 'model_url: server answered HTTP 404',
    });
    const redirected = await load('to-private');
    expect(redirected.status.status).toBe('FAILURE');
    expect(String(redirected.status.error)).toMatch(
      /^model_url: redirect to http:\/\/10\.0\.0\.1\/model\.safetensors refused: address 10\.0\.0\.1 is not public/,
    );
  });

  it('shows download progress as bytes done over Content-Length, and a cancel removes the partial file', async () => {
    const id = await submit('/load_model/v1', { ...LOAD, model_url: `${filesUrl}/slow.safetensors` }, alice);
    let progress: number | undefined;
    for (const deadline = Date.now() + 20_000; progress === undefined; ) {
      const { body } = await call('GET', `/load_model/v1/status/${id}`, alice);
      if (typeof body.progress === 'number' && body.progress > 0 && body.progress < 1)
        progress = body.progress;
      if (Date.now() > deadline) throw new Error('no download progress seen');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await filesIn(sharedDir)).some((name) => name.endsWith('.part'))).toBe(true);
    const cancelled = await call('POST', `/load_model/v1/cancel/${id}`, alice);
    expect(cancelled.body.status).toBe('FAILURE');
    // The running download stops and removes its temporary file; the model never appears.
    for (const deadline = Date.now() + 10_000; ; ) {
      if (!(await filesIn(sharedDir)).some((name) => name.endsWith('.part'))) break;
      if (Date.now() > deadline) throw new Error('the partial file was not removed');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await modelRow(id))?.status).toBe('failed');
  });

  it('fails a load on a full disk (ENOSPC) with a clear error, no file and a failed row hidden from the list', async () => {
    diskFull = true;
    try {
      const { id, status } = await load('small.safetensors');
      expect(status.status).toBe('FAILURE');
      expect(String(status.error)).toMatch(
        /^the model folder .*\/loras is full \(ENOSPC\) after .*; the partial file was removed$/,
      );
      expect((await modelRow(id))?.status).toBe('failed');
      expect((await filesIn(sharedDir)).filter((name) => name.endsWith('.part'))).toEqual([]);
      const models = await call('GET', '/models/v1', alice);
      const ids = (models.body as unknown as { model_id: string }[]).map((model) => model.model_id);
      const row = await db.pool.query('SELECT model_id FROM models WHERE task_id = $1', [id]);
      expect(ids).not.toContain(row.rows[0].model_id);
    } finally {
      diskFull = false;
    }
  });

  it("deletes an owner's model with its files on every folder; another owner's answers 404", async () => {
    const lora = await loaded('small.safetensors', {}, acme);
    const sync = await submit('/sync_model/v1', { model_id: lora, server_id: 'big' }, acme);
    expect((await settle('/sync_model/v1', sync, acme)).status).toBe('SUCCESS');
    const file = `loras/${lora}.safetensors`;
    expect(await filesIn(sharedDir)).toContain(file);
    expect(await filesIn(bigDir)).toContain(file);

    expect(await call('DELETE', `/models/v1/${lora}`, alice)).toEqual({
      status: 404,
      body: { detail: 'Model not found' },
    });
    expect(await call('DELETE', `/models/v1/${lora}`, acme)).toEqual({
      status: 200,
      body: { model_id: lora, deleted: true },
    });
    expect(await filesIn(sharedDir)).not.toContain(file);
    expect(await filesIn(bigDir)).not.toContain(file);
    expect((await call('GET', `/models/v1/${lora}`, acme)).status).toBe(404);
    expect((await call('DELETE', `/models/v1/${lora}`, acme)).status).toBe(404);
    // A generation naming it now refuses it as it would any unknown id.
    const after = await settle(
      '/sd/text2image/v1',
      await submit('/sd/text2image/v1', { ...TEXT2IMAGE, lora_models: [lora] }, acme),
      acme,
    );
    expect(after).toEqual({
      status: 'FAILURE',
      error: `lora_models: '${lora}' is not one of your loaded models`,
    });
  });

  it('refuses to delete a model that is still loading (409 naming its task)', async () => {
    const id = await submit('/load_model/v1', { ...LOAD, model_url: `${filesUrl}/slow.safetensors` }, alice);
    const row = await db.pool.query<{ model_id: string }>('SELECT model_id FROM models WHERE task_id = $1', [
      id,
    ]);
    const modelId = row.rows[0]!.model_id;
    try {
      expect(await call('DELETE', `/models/v1/${modelId}`, alice)).toEqual({
        status: 409,
        body: {
          detail:
            `model '${modelId}' is in use by task ${id} (/load_model/v1), which has not ended; ` +
            'cancel it or wait for it to end, then delete the model',
        },
      });
    } finally {
      await call('POST', `/load_model/v1/cancel/${id}`, alice);
    }
    // Once its task ended (cancelled: the model failed), the row can go.
    expect((await call('DELETE', `/models/v1/${modelId}`, alice)).status).toBe(200);
  });

  it('retries a download that broke off, leaving no partial file of the failed attempt', async () => {
    const { id, status } = await load('flaky.safetensors');
    expect(status).toMatchObject({ status: 'SUCCESS' });
    expect(flakyServed).toBe(2);
    expect(await readFile(path.join(sharedDir, 'loras', `${status.model_id}.safetensors`))).toEqual(SMALL);
    expect((await filesIn(sharedDir)).filter((name) => name.endsWith('.part'))).toEqual([]);
    expect((await modelRow(id))?.status).toBe('ready');
  });
});
