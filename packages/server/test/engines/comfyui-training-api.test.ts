import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { caseJob, type FakeComfyUI, PIPELINE_SUITE, startFakeComfyUI } from '@imagegen/comfyui-fake';
import {
  COMPILERS,
  compilerFor,
  createComfyClient,
  createComfyuiEngine,
} from '@imagegen/engine-comfyui/engine';
import { createEngineRegistry, type Engine } from '@imagegen/engines';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { apiCalls } from '../support/api-calls.ts';
import { type FileServer, type LoopbackApi, serveFiles, startLoopbackApi } from '../support/loopback.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/**
 * `/train_model/v1` on the comfyui engine through the real API, against a fake ComfyUI 0.3.64
 * that reads a temporary COMFYUI_MODELS_DIR: the training states driven by the run, the LoRA
 * stored as the owner's model and used by a generation; then a field the training nodes cannot
 * serve, a training that fails on the server, and a cancelled one, each leaving no model behind.
 */

const TRAINING = PIPELINE_SUITE.find((testCase) => testCase.pipeline === '/train_model/v1')!;
const TRAIN = '/train_model/v1';

let db: TestDatabase;
let api: LoopbackApi;
let engine: Engine;
let fake: FakeComfyUI;
let pictures: FileServer;
let modelsDir: string;
let owner: string;
/** The suite's training body, with its photos' loopback URLs. */
let body: Record<string, unknown>;

beforeAll(async () => {
  modelsDir = await mkdtemp(path.join(tmpdir(), 'imagegen-training-api-'));
  fake = await startFakeComfyUI({ modelsDir, stepDelayMs: 1, name: 'gpu-a' });
  const files: Record<string, readonly [string, Buffer]> = {};
  pictures = await serveFiles(files);
  const job = await caseJob(TRAINING, (field, n) => `${pictures.url}/${field}-${n}.png`);
  for (const image of [job.images.images!].flat())
    files[new URL(image.url).pathname] = ['image/png', await image.read()];
  body = { ...TRAINING.body, images: job.input.images };

  db = await createTestDatabase();
  owner = (await createOwner(db.pool, { name: 'trainer', plan: 'UNLIMITED' })).apiKey;
  engine = createComfyuiEngine({
    servers: [createComfyClient({ url: fake.url, name: fake.name, requestTimeoutMs: 2_000, silenceMs: 300 })],
    compilers: COMPILERS,
    checkpoints: { 'sd1.5': 'random-sd15.safetensors' },
    modelFiles: {
      folders: { shared: modelsDir, byServer: {} },
      maxBytes: 1024,
      fetch: () => Promise.reject(new Error('no download in these tests')),
    },
  });
  const engines = createEngineRegistry([engine], { enabled: ['comfyui'], pinned: {} });
  // No worker yet: the first training is seen queued before one starts.
  api = await startLoopbackApi({
    pool: db.pool,
    engines,
    withWorker: false,
    worker: { attemptTimeoutMs: 30_000 },
  });
});

afterAll(async () => {
  await api?.close();
  await engine?.close?.();
  await fake?.close();
  await pictures?.close();
  await db?.drop();
  if (modelsDir) await rm(modelsDir, { recursive: true, force: true });
});

const { call, submit, settle } = apiCalls(() => api.url);
let working = false;
/** The worker, started once. */
function startWorker(): void {
  if (!working) api.addWorker();
  working = true;
}

const status = async (id: string) => (await call('GET', `${TRAIN}/status/${id}`, owner)).body;

/** Polls a training until it ends; answers its final body and every body seen on the way. */
async function followTraining(
  id: string,
): Promise<{ final: Record<string, unknown>; seen: Record<string, unknown>[] }> {
  const seen: Record<string, unknown>[] = [];
  for (const deadline = Date.now() + 60_000; ; ) {
    const now = await status(id);
    seen.push(now);
    if (now.status === 'completed' || now.status === 'failed') return { final: now, seen };
    if (Date.now() > deadline) throw new Error(`training ${id} still ${String(now.status)} after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const modelRow = async (taskId: string) =>
  (
    await db.pool.query<{
      model_id: string;
      status: string;
      file_sha256: string | null;
      file_bytes: string | null;
    }>('SELECT model_id, status, file_sha256, file_bytes FROM models WHERE task_id = $1', [taskId])
  ).rows[0]!;

async function filesIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

async function listedIds(): Promise<string[]> {
  const models = (await call('GET', '/models/v1', owner)).body as unknown as { model_id: string }[];
  return models.map((model) => model.model_id);
}

/** Another client's prompt that keeps the fake busy for a while (ComfyUI runs one at a time). */
async function occupyServer(steps: number): Promise<Promise<unknown>> {
  const compiled = compilerFor('/sd/text2image/v1')!.compile({
    input: (await caseJob(PIPELINE_SUITE[0]!)).input,
    seed: 1,
    images: {},
    filenamePrefix: `others/${randomUUID()}/img`,
    checkpoints: { 'sd1.5': 'random-sd15.safetensors' },
  });
  const prompt = structuredClone(compiled.prompt) as Record<
    string,
    { class_type: string; inputs: Record<string, unknown> }
  >;
  for (const node of Object.values(prompt)) if (node.class_type === 'KSampler') node.inputs.steps = steps;
  const other = createComfyClient({ url: fake.url, name: 'someone-else' });
  return other
    .run(prompt, {
      promptId: randomUUID(),
      outputNodes: compiled.outputNodes,
      signal: new AbortController().signal,
    })
    .finally(() => other.close());
}

describe('training on the comfyui engine through the API', () => {
  it('walks queued, initialising, running with progress, completed; stores the LoRA with its sha256 as a listed model a generation can use', async () => {
    // Progress is written at most every 500 ms: 10 training steps of 100 ms outlast that.
    fake.faults.slow(100);
    let trainingId: string;
    let modelId: string;
    try {
      trainingId = await submit(TRAIN, { ...body, max_train_steps: 10 }, owner);
      expect((await status(trainingId)).status).toBe('queued');
      // ComfyUI is busy with another client's prompt: the claimed training waits in its queue.
      const other = await occupyServer(10);
      startWorker();
      const { final, seen } = await followTraining(trainingId);
      await other;

      const states = seen.map((body) => body.status).filter((state, n, all) => state !== all[n - 1]);
      expect(states).toEqual(['queued', 'initialising', 'running', 'completed']);
      const progress = seen
        .filter((body) => body.status === 'running')
        .map((body) => body.progress as number);
      // Training starts at 0 (0.3.64 reports no training step), then the sample's steps move it.
      expect(progress[0]).toBe(0);
      expect(progress.some((p) => p > 0 && p < 1)).toBe(true);
      expect(progress).toEqual([...progress].sort((a, b) => a - b));
      expect(Object.keys(final).sort()).toEqual(['model_id', 'status', 'training_duration_seconds']);
      expect(final.training_duration_seconds).toBeGreaterThan(0);
      modelId = String(final.model_id);
    } finally {
      fake.faults.slow(1);
    }

    // The LoRA lies in loras/ under the model id, with the sha256 and size the row records.
    const file = await readFile(path.join(modelsDir, 'loras', `${modelId}.safetensors`));
    expect(await modelRow(trainingId)).toEqual({
      model_id: modelId,
      status: 'ready',
      file_sha256: createHash('sha256').update(file).digest('hex'),
      file_bytes: String(file.length),
    });
    expect(await filesIn(modelsDir)).toEqual([`loras/${modelId}.safetensors`]);

    // Listed as the owner's LoRA of the base model, its sample image the validation prompt drawn.
    const model = (await call('GET', `/models/v1/${modelId}`, owner)).body;
    expect(model).toMatchObject({
      model_id: modelId,
      model_name: TRAINING.body.model_name,
      base_model: 'sd1.5',
      model_type: 'lora',
      trained_model: true,
    });
    expect(await listedIds()).toContain(modelId);
    const samples = model.sample_images as string[];
    expect(samples).toHaveLength(1);
    const sample = await sharp(Buffer.from(await (await fetch(samples[0]!)).arrayBuffer())).metadata();
    expect([sample.format, sample.width, sample.height]).toEqual(['png', 64, 64]);

    // A generation naming it loads its file through a LoraLoader.
    const generation = await submit(
      '/sd/text2image/v1',
      {
        prompt: 'sks lighthouse',
        negative_prompt: '',
        num_inference_steps: 2,
        width: 64,
        height: 64,
        lora_models: [modelId],
      },
      owner,
    );
    expect(await settle('/sd/text2image/v1', generation, owner)).toMatchObject({ status: 'SUCCESS' });
    const history = JSON.stringify(await (await fetch(`${fake.url}/history`)).json());
    expect(history).toMatch(
      new RegExp(`"class_type":"LoraLoader","inputs":\\{[^}]*"lora_name":"${modelId}\\.safetensors"`),
    );
  });

  it('fails a training the training nodes cannot serve, naming the field, with no listed model and no file', async () => {
    startWorker();
    const id = await submit(TRAIN, { ...body, base_model: 'flux' }, owner);
    const { final } = await followTraining(id);
    expect(final).toEqual({
      status: 'failed',
      error: expect.stringMatching(/^base_model: this engine trains sd1\.5 and sdxl checkpoints; /),
    });
    const row = await modelRow(id);
    expect(row.status).toBe('failed');
    expect(await listedIds()).not.toContain(row.model_id);
    expect((await filesIn(modelsDir)).filter((file) => file.includes(row.model_id))).toEqual([]);
  });

  it("fails a training that fails on the server with the server's words, once, leaving no model", async () => {
    startWorker();
    fake.faults.failNode({
      classType: 'TrainLoraNode',
      atStep: 1,
      exceptionType: 'RuntimeError',
      message: 'expected scalar type Float but found BFloat16',
    });
    try {
      const id = await submit(TRAIN, body, owner);
      const { final } = await followTraining(id);
      expect(final).toEqual({
        status: 'failed',
        error: expect.stringMatching(
          /^TrainLoraNode \(node \d+\) failed on server gpu-a: RuntimeError: expected scalar type Float but found BFloat16$/,
        ),
      });
      const attempts = await db.pool.query('SELECT attempts FROM tasks WHERE id = $1', [id]);
      expect(attempts.rows[0].attempts).toBe(1);
      const row = await modelRow(id);
      expect([row.status, row.file_sha256]).toEqual(['failed', null]);
      expect(await listedIds()).not.toContain(row.model_id);
      expect((await filesIn(modelsDir)).filter((file) => file.includes(row.model_id))).toEqual([]);
    } finally {
      fake.faults.failNode(undefined);
    }
  });

  it('cancels a running training: failed at once, its prompt interrupted on the server before the LoRA is saved, no model', async () => {
    startWorker();
    fake.faults.slow(200);
    try {
      const interrupts = fake.counters.interrupts;
      const runs = fake.executions.length;
      const id = await submit(TRAIN, body, owner);
      for (const deadline = Date.now() + 20_000; (await status(id)).status !== 'running'; ) {
        if (Date.now() > deadline) throw new Error('the training never ran');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const cancelled = await call('POST', `${TRAIN}/cancel/${id}`, owner);
      expect(cancelled.status).toBe(200);
      expect(await status(id)).toMatchObject({ status: 'failed' });
      // The worker aborts the engine, which interrupts its prompt; 0.3.64 stops it after its
      // training steps, before SaveLoRANode.
      for (const deadline = Date.now() + 20_000; fake.executions[runs]?.status === undefined; ) {
        if (Date.now() > deadline) throw new Error('the prompt did not end');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(fake.executions[runs]!.status).toBe('interrupted');
      expect(fake.counters.interrupts).toBe(interrupts + 1);
      const row = await modelRow(id);
      expect([row.status, row.file_sha256]).toEqual(['failed', null]);
      expect(await listedIds()).not.toContain(row.model_id);
      expect((await filesIn(modelsDir)).filter((file) => file.includes(row.model_id))).toEqual([]);
    } finally {
      fake.faults.slow(1);
    }
  });
});
