import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  caseJob,
  type FakeComfyOptions,
  type FakeComfyUI,
  PIPELINE_SUITE,
  startFakeComfyUI,
} from '@imagegen/comfyui-fake';
import type { Engine, EngineJob } from '@imagegen/engines';
import { afterEach, describe, expect, it } from 'vitest';
import { createComfyClient } from '../src/client/index.ts';
import { createComfyuiEngine } from '../src/comfyui-engine.ts';
import { COMPILERS } from '../src/compilers/index.ts';
import { MODEL_PROFILES } from '../src/model-profiles.ts';

/**
 * `/train_model/v1` on the comfyui engine against the fake ComfyUI: the LoRA SaveLoRANode wrote,
 * fetched by the name ComfyUI gives it and stored as the owner's model; progress as the server
 * reports it (0.3.64: none during training; later releases: each step); and a training that fails
 * or is cancelled, leaving no file.
 */

const TRAINING = PIPELINE_SUITE.find((testCase) => testCase.pipeline === '/train_model/v1')!;
const STEPS = Number(TRAINING.body.max_train_steps);

let fake: FakeComfyUI | undefined;
let engine: Engine | undefined;
let modelsDir: string | undefined;

afterEach(async () => {
  await engine?.close?.();
  await fake?.close();
  if (modelsDir) await rm(modelsDir, { recursive: true, force: true });
  engine = fake = modelsDir = undefined;
});

async function setUp(options: FakeComfyOptions = {}, withModelsDir = true) {
  modelsDir = await mkdtemp(path.join(tmpdir(), 'imagegen-training-'));
  fake = await startFakeComfyUI({ stepDelayMs: 5, modelsDir, ...options });
  engine = createComfyuiEngine({
    servers: [createComfyClient({ url: fake.url, name: 'gpu-1', silenceMs: 200 })],
    compilers: COMPILERS,
    checkpoints: { 'sd1.5': 'random-sd15.safetensors' },
    ...(withModelsDir
      ? {
          modelFiles: {
            folders: { shared: modelsDir, byServer: {} },
            maxBytes: 1024,
            fetch: () => Promise.reject(new Error('no download here')),
          },
        }
      : {}),
  });
  await engine.start?.();
  return { fake, engine, modelsDir };
}

function progressLog() {
  const seen: [number, string | undefined][] = [];
  return { seen, progress: (fraction: number, message?: string) => seen.push([fraction, message]) };
}

const modelIdOf = (job: EngineJob) => Object.keys(job.models!)[0]!;

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

describe('training on the comfyui engine', () => {
  it('serves /train_model/v1 only where COMFYUI_MODELS_DIR lets it store the LoRA', async () => {
    const { engine } = await setUp({}, false);
    expect(engine.pipelines).not.toContain('/train_model/v1');
    expect(engine.pipelines).toContain('/sd/text2image/v1');
    await engine.close?.();
    const { engine: storing } = await setUp();
    expect(storing.pipelines).toContain('/train_model/v1');
  });

  it("stores the LoRA SaveLoRANode wrote as loras/<model_id>.safetensors, with the file's sha256 and size, and answers the sample image", async () => {
    const { engine, modelsDir, fake } = await setUp();
    const job = await caseJob(TRAINING);
    const { seen, progress } = progressLog();
    const result = await engine.run(job, { signal: new AbortController().signal, progress });

    const stored = await readFile(path.join(modelsDir, 'loras', `${modelIdOf(job)}.safetensors`));
    // The fake's LoRA is a real safetensors file: its header names LoRA weights of rank 8.
    const header = JSON.parse(stored.subarray(8, 8 + Number(stored.readBigUInt64LE(0))).toString());
    expect(Object.keys(header).every((key) => key.startsWith('diffusion_model.'))).toBe(true);
    expect(result.model).toEqual({
      sha256: createHash('sha256').update(stored).digest('hex'),
      bytes: stored.length,
    });
    expect(result.images.map((image) => [image.width, image.height])).toEqual([[64, 64]]);
    expect(result.meta).toMatchObject({
      comfyui_server: 'gpu-1',
      model_file: `loras/${modelIdOf(job)}.safetensors`,
      sha256: result.model!.sha256,
    });
    // Only the model: no temporary file, nothing else written.
    expect(await filesUnder(modelsDir)).toEqual([`loras/${modelIdOf(job)}.safetensors`]);
    // The server lists it, as it would any LoRA in its folder.
    expect(await (await fetch(`${fake.url}/models/loras`)).json()).toContain(`${modelIdOf(job)}.safetensors`);
    // 0.3.64 reports no training step: the start of training is the first report, then the sample's steps.
    const total = STEPS + MODEL_PROFILES['sd1.5'].sampling.steps;
    expect(seen[0]).toEqual([0, `step 0 of ${total} (pass 1 of 2)`]);
    expect(seen.slice(1).every(([fraction]) => fraction > STEPS / total)).toBe(true);
    expect(seen.at(-1)).toEqual([1, `step ${total} of ${total} (pass 2 of 2)`]);
  });

  it('follows each training step where the server reports them, as ComfyUI releases after 0.3.64 do', async () => {
    const { engine } = await setUp({ trainingStepProgress: true });
    const { seen, progress } = progressLog();
    await engine.run(await caseJob(TRAINING), { signal: new AbortController().signal, progress });
    const total = STEPS + MODEL_PROFILES['sd1.5'].sampling.steps;
    expect(seen.slice(0, STEPS + 1)).toEqual([
      [0, `step 0 of ${total} (pass 1 of 2)`],
      ...Array.from({ length: STEPS }, (_, n) => [
        (n + 1) / total,
        `step ${n + 1} of ${total} (pass 1 of 2)`,
      ]),
    ]);
  });

  it("fails with the server's words when training fails midway, storing nothing", async () => {
    const { engine, modelsDir, fake } = await setUp();
    fake.faults.failNode({
      classType: 'TrainLoraNode',
      atStep: 1,
      exceptionType: 'RuntimeError',
      message: 'expected scalar type Float but found BFloat16',
    });
    const job = await caseJob(TRAINING);
    await expect(
      engine.run(job, { signal: new AbortController().signal, progress: () => {} }),
    ).rejects.toThrow(
      /^TrainLoraNode \(node \d+\) failed on server gpu-1: RuntimeError: expected scalar type Float but found BFloat16$/,
    );
    expect(fake.executions.at(-1)!.status).toBe('error');
    expect(await filesUnder(modelsDir)).toEqual([]);
  });

  it('interrupts the training when aborted: 0.3.64 ends its steps, then stops before saving, and nothing is stored', async () => {
    const { engine, modelsDir, fake } = await setUp({ stepDelayMs: 150 });
    const controller = new AbortController();
    const running = engine.run(await caseJob(TRAINING), {
      signal: controller.signal,
      progress: (fraction) => {
        // Abort as training starts (the first report): the server is mid-step.
        if (fraction === 0) setTimeout(() => controller.abort(new Error('cancelled')), 20);
      },
    });
    await expect(running).rejects.toThrow('cancelled');
    for (const deadline = Date.now() + 10_000; fake.executions.at(-1)?.status === undefined; ) {
      if (Date.now() > deadline) throw new Error('the prompt did not end');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(fake.executions.at(-1)!.status).toBe('interrupted');
    expect(fake.counters.interrupts).toBe(1);
    // The training ran all its steps (no interrupt is seen inside it); the save never ran.
    const ran = fake.executions.at(-1)!;
    expect(ran.endedAt! - ran.startedAt).toBeGreaterThanOrEqual(STEPS * 150 - 20);
    const history = (await (await fetch(`${fake.url}/history/${ran.promptId}`)).json()) as Record<
      string,
      { status: { messages: [string, Record<string, unknown>][] } }
    >;
    expect(history[ran.promptId]!.status.messages.at(-1)).toEqual([
      'execution_interrupted',
      expect.objectContaining({ node_type: 'SaveLoRANode' }),
    ]);
    expect(await filesUnder(modelsDir)).toEqual([]);
  });
});
