import {
  type Engine,
  EngineInputError,
  type EngineJob,
  type InputImage,
  inMemoryImage,
} from '@imagegen/engines';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { createComfyuiEngine } from '../src/comfyui-engine.ts';
import {
  type ApiPrompt,
  type CompileContext,
  type FileRef,
  type PipelineCompiler,
  PromptFailedError,
  PromptLostError,
  type PromptProgress,
  PromptRejectedError,
  ServerUnavailableError,
} from '../src/contracts.ts';
import { type StandInClient, standInClient } from './stand-in-client.ts';

/** A compiler stand-in: a checkpoint, one LoadImage per input, two sampling passes, one output node. */
const compiled: CompileContext[] = [];
const compiler: PipelineCompiler = {
  pipeline: '/sd/image2image/v1',
  requires: { nodes: ['CheckpointLoaderSimple'], models: [{ folder: 'checkpoints', what: 'SD 1.5' }] },
  compile(ctx) {
    compiled.push(ctx);
    if (ctx.input.steps === 0) throw new EngineInputError('steps: 0 steps draw nothing');
    const model = String(ctx.input.model_id);
    const checkpoint = ctx.checkpoints[model];
    if (!checkpoint) throw new EngineInputError(`model_id: no checkpoint for "${model}"`);
    return {
      prompt: {
        '1': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: checkpoint } },
        '2': { class_type: 'LoadImage', inputs: { image: ctx.images.init_image } },
        '9': { class_type: 'SaveImage', inputs: { filename_prefix: ctx.filenamePrefix } },
      },
      outputNodes: ['9'],
      checkpoint,
      samplingSteps: [
        { node: '3', steps: Number(ctx.input.steps) },
        { node: '7', steps: 10 },
      ],
    };
  },
};

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();

async function inputImage(): Promise<InputImage> {
  return inMemoryImage(await png(8, 8), {
    contentType: 'image/png',
    width: 8,
    height: 8,
    url: 'https://x.test/in.png',
  });
}

interface Submission {
  server: string;
  prompt: ApiPrompt;
  promptId: string;
  signal: AbortSignal;
}

/**
 * A server stand-in that runs a graph by reporting the given progress and answering one output
 * file per call to `outputs`; `fault` decides what a submission does instead.
 */
function server(
  name: string,
  log: Submission[],
  options: {
    outputs?: () => Promise<Buffer[]>;
    progress?: PromptProgress[];
    fault?: (n: number, submission: Submission) => Promise<never> | undefined;
  } = {},
): StandInClient {
  const files = new Map<string, Buffer>();
  let submissions = 0;
  return standInClient(name, {
    async upload(image) {
      return `${image.name.replace('.png', '')} (1).png`;
    },
    async run(prompt, { promptId, signal, onProgress }) {
      const submission = { server: name, prompt, promptId, signal };
      log.push(submission);
      const fault = options.fault?.(++submissions, submission);
      if (fault) return fault;
      for (const step of options.progress ?? []) onProgress?.(step);
      const outputs = await (options.outputs ?? (async () => [await png(64, 48)]))();
      return {
        files: outputs.map((data, n): FileRef => {
          const filename = `${promptId}-${n}.png`;
          files.set(filename, data);
          return { filename, subfolder: 'imagegen', type: 'output' };
        }),
        texts: [],
      };
    },
    async view(file) {
      return files.get(file.filename)!;
    },
  });
}

const engines: Engine[] = [];
afterEach(async () => {
  compiled.length = 0;
  await Promise.all(engines.splice(0).map((engine) => engine.close?.()));
});

async function startEngine(servers: StandInClient[]) {
  const engine = createComfyuiEngine({
    servers,
    compilers: [compiler],
    checkpoints: { 'sd1.5': 'sd15.safetensors', other: 'other.safetensors' },
    pool: { backoffMs: 60_000 },
  });
  engines.push(engine);
  await engine.start?.();
  return engine;
}

async function job(extra: Partial<EngineJob> = {}, input: Record<string, unknown> = {}): Promise<EngineJob> {
  return {
    pipeline: '/sd/image2image/v1',
    input: { model_id: 'sd1.5', steps: 20, ...input },
    images: { init_image: await inputImage() },
    seed: 7,
    ...extra,
  };
}

function context(signal = new AbortController().signal) {
  const progress: [number, string | undefined][] = [];
  return { progress, ctx: { signal, progress: (f: number, m?: string) => progress.push([f, m]) } };
}

describe('the comfyui engine', () => {
  it('serves the pipelines it has compilers for, and asks the worker for three jobs per server', async () => {
    const engine = await startEngine([standInClient('a'), standInClient('b')]);
    expect(engine.pipelines).toEqual(['/sd/image2image/v1']);
    expect(engine.capacity).toBe(6);
    expect(engine.servers?.().map((s) => [s.name, s.state])).toEqual([
      ['a', 'up'],
      ['b', 'up'],
    ]);
  });

  it('uploads the inputs, compiles with the names the server gave, and answers its outputs as they are', async () => {
    const log: Submission[] = [];
    const jpeg = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#aa0000' } })
      .jpeg()
      .toBuffer();
    const a = server('a', log, { outputs: async () => [await png(64, 48), jpeg] });
    const engine = await startEngine([a]);
    const { ctx } = context();
    const result = await engine.run(await job(), ctx);

    expect(result.images.map((image) => [image.contentType, image.width, image.height])).toEqual([
      ['image/png', 64, 48],
      ['image/jpeg', 40, 30],
    ]);
    expect(result.images[1]!.data.equals(jpeg)).toBe(true);
    expect(result.meta).toEqual({ comfyui_server: 'a', checkpoint: 'sd15.safetensors' });
    // Compiled twice: before a server is taken (names asked for), then with the names given.
    const [before, after] = compiled;
    expect(before!.images.init_image).toMatch(/^imagegen-[0-9a-f-]{36}-init_image\.png$/);
    expect(after!.images.init_image).toBe(`${String(before!.images.init_image).replace('.png', '')} (1).png`);
    expect(log[0]!.prompt['2']!.inputs.image).toBe(after!.images.init_image);
    expect(after!.seed).toBe(7);
    expect(after!.checkpoints).toEqual({ 'sd1.5': 'sd15.safetensors', other: 'other.safetensors' });
  });

  it("compiles each submission for its server's device, as the server's last check named it", async () => {
    const log: Submission[] = [];
    const mac = server('mac', log);
    mac.stats = async () => ({ comfyuiVersion: '0.3.64', queueRemaining: 0, device: 'mps' });
    const engine = await startEngine([mac]);
    await engine.run(await job(), context().ctx);
    // The first compile only inspects the graph: no server, so no device.
    expect(compiled.map((ctx) => ctx.device)).toEqual([undefined, 'mps']);
  });

  it('gives every task its own filename_prefix and prompt id, so ComfyUI never answers from another task', async () => {
    const log: Submission[] = [];
    const engine = await startEngine([server('a', log)]);
    await engine.run(await job(), context().ctx);
    await engine.run(await job(), context().ctx);
    const prefixes = log.map((s) => String(s.prompt['9']!.inputs.filename_prefix));
    expect(prefixes[0]).toMatch(/^imagegen\/[0-9a-f-]{36}\/img$/);
    expect(new Set(prefixes).size).toBe(2);
    expect(new Set(log.map((s) => s.promptId)).size).toBe(2);
  });

  it('reports progress as steps done over the steps of every sampling pass, never going back', async () => {
    const log: Submission[] = [];
    const progress = [
      { node: '3', value: 5, max: 20 },
      { node: '3', value: 20, max: 20 },
      { node: '5', value: 3, max: 4 }, // an upscale model's tiles: not sampling
      { node: '7', value: 5, max: 10 },
      { node: '3', value: 1, max: 20 }, // late or repeated: ignored
      { node: '7', value: 10, max: 10 },
    ];
    const engine = await startEngine([server('a', log, { progress })]);
    const { ctx, progress: seen } = context();
    await engine.run(await job(), ctx);
    expect(seen).toEqual([
      [5 / 30, 'step 5 of 30 (pass 1 of 2)'],
      [20 / 30, 'step 20 of 30 (pass 1 of 2)'],
      [25 / 30, 'step 25 of 30 (pass 2 of 2)'],
      [1, 'step 30 of 30 (pass 2 of 2)'],
    ]);
  });

  it('fails bad input before any server is taken or any image uploaded', async () => {
    const log: Submission[] = [];
    const a = server('a', log);
    let uploads = 0;
    const upload = a.upload.bind(a);
    a.upload = (...args) => {
      uploads++;
      return upload(...args);
    };
    const engine = await startEngine([a]);
    await expect(engine.run(await job({}, { steps: 0 }), context().ctx)).rejects.toThrow(
      new EngineInputError('steps: 0 steps draw nothing'),
    );
    expect(uploads).toBe(0);
    expect(engine.servers!()[0]!.inFlight).toBe(0);
  });

  it('resubmits a prompt the server forgot (a restart) once, under a new id, and succeeds', async () => {
    const log: Submission[] = [];
    const fault = (n: number) =>
      n === 1 ? Promise.reject(new PromptLostError('a restarted and forgot the prompt')) : undefined;
    const engine = await startEngine([server('a', log, { fault })]);
    const result = await engine.run(await job(), context().ctx);
    expect(result.images).toHaveLength(1);
    expect(log).toHaveLength(2);
    expect(log[0]!.promptId).not.toBe(log[1]!.promptId);
    expect(log[1]!.prompt['9']!.inputs.filename_prefix).toBe(log[0]!.prompt['9']!.inputs.filename_prefix);
  });

  it('fails the attempt when the prompt is lost a second time (the worker retries it)', async () => {
    const log: Submission[] = [];
    const fault = (n: number) => Promise.reject(new PromptLostError(`lost ${n}`));
    const engine = await startEngine([server('a', log, { fault })]);
    const failure = await engine.run(await job(), context().ctx).catch((error) => error);
    expect(failure).toBeInstanceOf(PromptLostError);
    expect(failure).not.toBeInstanceOf(EngineInputError);
    expect(log).toHaveLength(2);
    expect(engine.servers!()[0]!.inFlight).toBe(0);
  });

  it("fails the task with the server's plain words when it refuses the graph", async () => {
    const log: Submission[] = [];
    const reason = "CheckpointLoaderSimple (node 1): unknown checkpoint 'x.safetensors' on server a";
    const fault = () => Promise.reject(new PromptRejectedError(reason));
    const engine = await startEngine([server('a', log, { fault })]);
    await expect(engine.run(await job(), context().ctx)).rejects.toThrow(new EngineInputError(reason));
    expect(log).toHaveLength(1);
    expect(engine.servers!()[0]).toMatchObject({ state: 'up', inFlight: 0 });
  });

  it('fails the task, without a retry, when the graph fails while it runs', async () => {
    const log: Submission[] = [];
    const reason = 'KSampler (node 3) failed on server a: RuntimeError: out of memory';
    const fault = () => Promise.reject(new PromptFailedError(reason));
    const engine = await startEngine([server('a', log, { fault }), server('b', log)]);
    await expect(engine.run(await job(), context().ctx)).rejects.toThrow(new EngineInputError(reason));
    expect(log).toHaveLength(1);
  });

  it('runs the job again on another server when its server dies mid-run, and marks that one down', async () => {
    const log: Submission[] = [];
    const a = server('a', log, {
      fault: () => {
        a.up = false;
        return Promise.reject(new ServerUnavailableError('a: socket hang up'));
      },
    });
    const b = server('b', log);
    const engine = await startEngine([a, b]);
    const result = await engine.run(await job(), context().ctx);
    expect(result.meta?.comfyui_server).toBe('b');
    expect(log.map((s) => s.server)).toEqual(['a', 'b']);
    expect(engine.servers?.().map((s) => [s.name, s.state, s.inFlight])).toEqual([
      ['a', 'down', 0],
      ['b', 'up', 0],
    ]);
  });

  it('keeps one progress bar for the task when it runs again on another server', async () => {
    const log: Submission[] = [];
    const a = server('a', log, { progress: [{ node: '3', value: 15, max: 20 }] });
    a.run = async (_prompt, { onProgress }) => {
      onProgress?.({ node: '3', value: 15, max: 20 });
      a.up = false;
      throw new ServerUnavailableError('a: socket hang up');
    };
    const b = server('b', log, {
      progress: [
        { node: '3', value: 10, max: 20 },
        { node: '7', value: 10, max: 10 },
      ],
    });
    const engine = await startEngine([a, b]);
    const { ctx, progress: seen } = context();
    await engine.run(await job(), ctx);
    expect(seen.map(([fraction]) => fraction)).toEqual([15 / 30, 1]);
  });

  it('aborts the run on the server when the task is aborted, and frees its slot', async () => {
    const log: Submission[] = [];
    let interrupted = false;
    const fault = (_n: number, submission: Submission) =>
      new Promise<never>((_resolve, reject) => {
        submission.signal.addEventListener('abort', () => {
          interrupted = true;
          reject(submission.signal.reason);
        });
      });
    const engine = await startEngine([server('a', log, { fault })]);
    const controller = new AbortController();
    const running = engine.run(await job(), context(controller.signal).ctx);
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new Error('task cancelled'));
    await expect(running).rejects.toThrow('task cancelled');
    expect(interrupted).toBe(true);
    expect(engine.servers!()[0]!.inFlight).toBe(0);
  });

  it('runs a routed job only on the servers its routing names', async () => {
    const log: Submission[] = [];
    const engine = await startEngine([server('a', log), server('b', log)]);
    for (let n = 0; n < 3; n++) await engine.run(await job({ servers: ['b'] }), context().ctx);
    expect(log.map((s) => s.server)).toEqual(['b', 'b', 'b']);
  });

  it('sends a job where its checkpoint is loaded when servers are equally free', async () => {
    const log: Submission[] = [];
    const engine = await startEngine([server('a', log), server('b', log)]);
    await engine.run(await job({}, { model_id: 'sd1.5' }), context().ctx);
    await engine.run(await job({}, { model_id: 'other' }), context().ctx);
    await engine.run(await job({}, { model_id: 'sd1.5' }), context().ctx);
    await engine.run(await job({}, { model_id: 'other' }), context().ctx);
    expect(log.map((s) => s.server)).toEqual(['a', 'b', 'a', 'b']);
    expect(engine.servers?.().map((s) => s.checkpoint)).toEqual(['sd15.safetensors', 'other.safetensors']);
  });
});
