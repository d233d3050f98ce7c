import { type FakeComfyUI, readCapture, startFakeComfyUI } from '@imagegen/comfyui-fake';
import type { Engine, EngineJob } from '@imagegen/engines';
import { afterEach, describe, expect, it } from 'vitest';
import { createComfyClient } from '../src/client/index.ts';
import { createComfyuiEngine } from '../src/comfyui-engine.ts';
import { type ApiPrompt, type PipelineCompiler, PromptStalledError } from '../src/contracts.ts';

/**
 * A fleet that repairs itself, driven through two FAKE ComfyUI servers: a prompt that stalls is
 * interrupted and its job runs on the other server, which leaves the first one suspect until a
 * prompt completes there; a silent socket is no stall; a server that dies is marked down.
 */

const RECORDED_TXT2IMG = readCapture<{ request: { body: { prompt: ApiPrompt } } }>(
  'txt2img-01-post-prompt-txt2img-64.json',
).request.body.prompt;

const STEPS = 6;

/** The recorded txt2img graph (KSampler 3, SaveImage 9), with the task's own filename prefix. */
const compiler: PipelineCompiler = {
  pipeline: '/sd/text2image/v1',
  requires: { nodes: ['CheckpointLoaderSimple'], models: [] },
  compile(ctx) {
    const recorded = RECORDED_TXT2IMG;
    const prompt: ApiPrompt = {
      ...recorded,
      '3': { ...recorded['3']!, inputs: { ...recorded['3']!.inputs, steps: STEPS } },
      '9': { ...recorded['9']!, inputs: { ...recorded['9']!.inputs, filename_prefix: ctx.filenamePrefix } },
    };
    return { prompt, outputNodes: ['9'], samplingSteps: [{ node: '3', steps: STEPS }] };
  },
};

const job = (servers?: string[]): EngineJob => ({
  pipeline: '/sd/text2image/v1',
  input: { prompt: 'a cat' },
  images: {},
  seed: 1,
  ...(servers ? { servers } : {}),
});

const run = (engine: Engine, servers?: string[]) =>
  engine.run(job(servers), { signal: AbortSignal.timeout(15_000), progress: () => {} });

let fakes: FakeComfyUI[] = [];
let engine: Engine | undefined;

/** Two fakes, gpu-a listed first (so an idle pool sends it the first job), and the engine over them. */
async function setUp(stallMs = 400) {
  fakes = [await startFakeComfyUI({ stepDelayMs: 20 }), await startFakeComfyUI({ stepDelayMs: 20 })];
  const [a, b] = fakes as [FakeComfyUI, FakeComfyUI];
  const client = (name: string, fake: FakeComfyUI) =>
    createComfyClient({
      url: fake.url,
      name,
      silenceMs: 50,
      stallMs,
      requestTimeoutMs: 300,
      maxFailedChecks: 2,
    });
  engine = createComfyuiEngine({
    servers: [client('gpu-a', a), client('gpu-b', b)],
    compilers: [compiler],
    checkpoints: {},
    pool: { checkEveryMs: 60_000 },
  });
  await engine.start?.();
  return { a, b, engine };
}

const server = (engine: Engine, name: string) => engine.servers!().find((s) => s.name === name)!;

afterEach(async () => {
  await engine?.close?.();
  await Promise.all(fakes.map((fake) => fake.close()));
  engine = undefined;
  fakes = [];
});

describe('stalled prompts', () => {
  it('interrupts a prompt that stalls, runs the job on the other server, and marks the first suspect', async () => {
    const { a, b, engine } = await setUp();
    a.faults.afterStep(2, 'stall');
    const result = await run(engine);
    expect(result.meta?.comfyui_server).toBe('gpu-b');
    expect(result.images).toHaveLength(1);
    // The stalled prompt was taken back on its server (POST /interrupt), and it ended there.
    expect(a.counters.interrupts).toBeGreaterThanOrEqual(1);
    expect(a.stalled).toBe(false);
    expect(b.counters.interrupts).toBe(0);
    const suspect = server(engine, 'gpu-a');
    expect(suspect.state).toBe('up');
    expect(suspect.suspect).toMatch(/made no progress for \d+ s on server gpu-a \(COMFYUI_STALL_SECONDS\)$/);
    expect(server(engine, 'gpu-b').suspect).toBeUndefined();

    // A prompt that completes there clears it.
    const again = await run(engine, ['gpu-a']);
    expect(again.meta?.comfyui_server).toBe('gpu-a');
    expect(server(engine, 'gpu-a').suspect).toBeUndefined();
  });

  it('prefers a server that is not suspect while one is free', async () => {
    const { a, engine } = await setUp();
    a.faults.afterStep(2, 'stall');
    await run(engine);
    // Both idle again: the pool would send the next job to gpu-a (used least recently), but it is suspect.
    expect((await run(engine)).meta?.comfyui_server).toBe('gpu-b');
  });

  it('fails the attempt as stalled when no other server may run the job', async () => {
    const { a, engine } = await setUp();
    a.faults.afterStep(2, 'stall');
    await expect(run(engine, ['gpu-a'])).rejects.toBeInstanceOf(PromptStalledError);
    expect(a.counters.interrupts).toBeGreaterThanOrEqual(1);
    expect(server(engine, 'gpu-a').suspect).toBeDefined();
  });

  it('takes a silent socket for no stall: the prompt is followed through /history and completes', async () => {
    const { a, engine } = await setUp(2_000);
    a.faults.silence(true);
    const result = await run(engine, ['gpu-a']);
    expect(result.meta?.comfyui_server).toBe('gpu-a');
    expect(a.counters.historyReads).toBeGreaterThan(0);
    expect(a.counters.interrupts).toBe(0);
    expect(server(engine, 'gpu-a').suspect).toBeUndefined();
  });

  it('marks a server that dies mid-run down (not suspect) and runs the job on the other', async () => {
    const { a, engine } = await setUp();
    a.faults.afterStep(2, 'die');
    const result = await run(engine);
    expect(result.meta?.comfyui_server).toBe('gpu-b');
    expect(server(engine, 'gpu-a').state).toBe('down');
    expect(server(engine, 'gpu-a').suspect).toBeUndefined();
  });

  it('leaves a prompt with its own unbounded stall alone (a training that reports no step)', async () => {
    const { a } = await setUp();
    const client = createComfyClient({ url: a.url, name: 'gpu-a', silenceMs: 50, stallMs: 200 });
    try {
      a.faults.afterStep(2, 'stall');
      const prompt = compiler.compile({ filenamePrefix: 'imagegen/t/img' } as never).prompt;
      const running = client.run(prompt, {
        promptId: crypto.randomUUID(),
        outputNodes: ['9'],
        signal: AbortSignal.timeout(15_000),
        stallMs: Number.POSITIVE_INFINITY,
      });
      // Four times the client's bound, then the step goes on: the prompt ends as it would have.
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(a.stalled).toBe(true);
      a.faults.resume();
      expect((await running).files).toHaveLength(1);
      expect(a.counters.interrupts).toBe(0);
    } finally {
      await client.close();
    }
  });
});
