import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type FakeComfyUI, startFakeComfyUI } from '@imagegen/comfyui-fake';
import { compileRequestValidator, endpointByPath } from '@imagegen/contract';
import { type Engine, EngineInputError, type EngineJob, type EngineServer } from '@imagegen/engines';
import { afterEach, describe, expect, it } from 'vitest';
import { createComfyClient } from '../src/client/index.ts';
import { createComfyuiEngine } from '../src/comfyui-engine.ts';
import { COMPILERS } from '../src/compilers/index.ts';
import { ServerOutOfMemoryError, ServerRefusedError } from '../src/contracts.ts';

/**
 * A fleet that survives its servers, driven through FAKE ComfyUI servers (each fault as ComfyUI
 * shows it): a prompt that runs out of memory frees the server and runs once more elsewhere; a
 * server that is killed mid-prompt is known at once, its prompts run on the other server and it
 * takes work again when it answers; a job goes only to a server that has the nodes and models its
 * graph needs.
 */

const SD15 = 'random-sd15.safetensors';
const SDXL = 'random-sdxl.safetensors';

function job(pipeline: string, body: Record<string, unknown>, servers?: string[]): EngineJob {
  const checked = compileRequestValidator(endpointByPath(pipeline)!)(body);
  if (!checked.ok) throw new Error(JSON.stringify(checked.detail));
  return {
    pipeline,
    input: checked.value as Record<string, unknown>,
    images: {},
    seed: 7,
    ...(servers ? { servers } : {}),
  };
}

const text2image = (servers?: string[], extra: Record<string, unknown> = {}) =>
  job(
    '/sd/text2image/v1',
    { prompt: 'a fox', negative_prompt: '', width: 64, height: 64, num_inference_steps: 4, ...extra },
    servers,
  );

let fakes: FakeComfyUI[] = [];
let engine: Engine | undefined;
const scratch: string[] = [];

afterEach(async () => {
  await engine?.close?.();
  await Promise.all(fakes.map((fake) => fake.close()));
  await Promise.all(scratch.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  engine = undefined;
  fakes = [];
});

/**
 * An engine over fakes named gpu-a, gpu-b… (gpu-a listed first, so an idle pool sends it the first
 * job). Silences and stall bounds are long: a fault these tests see is seen by its own sign, never
 * by a timer running out.
 */
async function fleet(
  fakeOptions: Parameters<typeof startFakeComfyUI>[0][],
  pool: Parameters<typeof createComfyuiEngine>[0]['pool'] = {},
) {
  fakes = await Promise.all(fakeOptions.map((options) => startFakeComfyUI({ stepDelayMs: 10, ...options })));
  const names = fakes.map((_, n) => `gpu-${String.fromCharCode(97 + n)}`);
  engine = createComfyuiEngine({
    servers: fakes.map((fake, n) =>
      createComfyClient({ url: fake.url, name: names[n], silenceMs: 60_000, stallMs: 600_000 }),
    ),
    compilers: COMPILERS,
    checkpoints: { 'sd1.5': SD15, sdxl: SDXL },
    pool: { checkEveryMs: 60_000, backoffMs: 50, maxBackoffMs: 200, ...pool },
  });
  await engine.start?.();
  return { fakes, engine };
}

const run = (engine: Engine, work: EngineJob) =>
  engine.run(work, { signal: AbortSignal.timeout(20_000), progress: () => {} });

const server = (engine: Engine, name: string): EngineServer =>
  engine.servers!().find((entry) => entry.name === name)!;

/** Resolves once the condition holds (checked on each turn of the event loop, 20 s at most). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const limit = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > limit) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('out of memory', () => {
  it('frees the server and runs the job once more on another server; counts it', async () => {
    const { fakes, engine } = await fleet([{}, {}]);
    const [a, b] = fakes as [FakeComfyUI, FakeComfyUI];
    a.faults.outOfMemory();
    const result = await run(engine, text2image());
    expect(result.meta?.comfyui_server).toBe('gpu-b');
    expect(result.meta?.comfyui_out_of_memory_on).toBe('gpu-a');
    expect(result.images).toHaveLength(1);
    // POST /free with the models unloaded, on the server that ran out.
    expect(a.counters.frees).toBe(1);
    expect(b.counters.frees).toBe(0);
    expect(server(engine, 'gpu-a')).toMatchObject({ state: 'up', outOfMemory: 1 });
    expect(server(engine, 'gpu-a').suspect).toBeUndefined();
    expect(server(engine, 'gpu-b').outOfMemory).toBe(0);
  });

  it('runs it again on the same server, its memory freed, when no other may run it', async () => {
    const { fakes, engine } = await fleet([{}, {}]);
    const [a] = fakes as [FakeComfyUI];
    // Out of memory until POST /free: a server that never frees it alone.
    a.faults.outOfMemory();
    const result = await run(engine, text2image(['gpu-a']));
    expect(result.meta?.comfyui_server).toBe('gpu-a');
    expect(a.counters.frees).toBe(1);
    expect(a.executions.map((record) => record.status)).toEqual(['error', 'success']);
  });

  it('marks a server that runs out again suspect, and fails the job naming both runs', async () => {
    const { fakes, engine } = await fleet([{}]);
    const [a] = fakes as [FakeComfyUI];
    a.faults.outOfMemory({ times: 2 });
    const failure = run(engine, text2image());
    await expect(failure).rejects.toBeInstanceOf(EngineInputError);
    await expect(failure).rejects.toThrow(
      /^KSampler \(node \d+\) ran out of memory on server gpu-a: torch\.OutOfMemoryError: Allocation on device 0 would exceed allowed memory\. \(out of memory\); run once more after freeing memory: KSampler/,
    );
    expect(server(engine, 'gpu-a').suspect).toMatch(
      /ran out of memory again before a prompt completed there/,
    );
    expect(server(engine, 'gpu-a').outOfMemory).toBe(2);
    // A prompt that completes there clears it.
    await run(engine, text2image());
    expect(server(engine, 'gpu-a').suspect).toBeUndefined();
  });

  it('recognises a CPU server that could not allocate (a RuntimeError from PyTorch’s allocator)', async () => {
    const { fakes } = await fleet([{}]);
    const [a] = fakes as [FakeComfyUI];
    a.faults.outOfMemory({ device: 'cpu', times: 1 });
    const client = createComfyClient({ url: a.url, name: 'gpu-a' });
    try {
      const work = text2image();
      const compiled = COMPILERS.find((c) => c.pipeline === work.pipeline)!.compile({
        input: work.input,
        seed: 1,
        images: {},
        filenamePrefix: 'imagegen/oom/img',
        checkpoints: { 'sd1.5': SD15 },
      });
      const failure = client.run(compiled.prompt, {
        promptId: crypto.randomUUID(),
        outputNodes: compiled.outputNodes,
        signal: AbortSignal.timeout(20_000),
      });
      await expect(failure).rejects.toBeInstanceOf(ServerOutOfMemoryError);
      await expect(failure).rejects.toThrow(
        /ran out of memory on server gpu-a: RuntimeError: .*DefaultCPUAllocator: can't allocate memory/,
      );
    } finally {
      await client.close();
    }
  });
});

describe('a server that dies', () => {
  it('takes a dropped socket for no death: the prompt goes on and completes where it runs', async () => {
    const { fakes, engine } = await fleet([{}, {}]);
    const [a] = fakes as [FakeComfyUI];
    a.faults.afterStep(2, 'drop-websocket');
    const result = await run(engine, text2image());
    expect(result.meta?.comfyui_server).toBe('gpu-a');
    expect(a.counters.promptsReceived).toBe(1);
    expect(server(engine, 'gpu-a').state).toBe('up');
  });

  it('knows at once that a killed server is gone: its running and queued prompts run on the other, none twice, and it takes work again when it answers', async () => {
    const { fakes, engine } = await fleet([{}, {}]);
    const [a, b] = fakes as [FakeComfyUI, FakeComfyUI];
    a.faults.afterStep(2, 'stall');
    // Four jobs: two on each server (one running, one queued behind it).
    const jobs = [1, 2, 3, 4].map(() => run(engine, text2image()));
    await until(() => a.stalled && a.counters.promptsQueued === 2, 'gpu-a runs one prompt and holds another');
    await a.faults.kill();
    // The clients wait 60 s for a silent socket and 10 minutes for a stall: only the refused
    // connection can end these jobs within the test's time.
    const results = await Promise.all(jobs);
    expect(results.map((result) => result.meta?.comfyui_server)).toEqual([
      'gpu-b',
      'gpu-b',
      'gpu-b',
      'gpu-b',
    ]);
    expect(server(engine, 'gpu-a').state).toBe('down');
    expect(server(engine, 'gpu-a').error).toMatch(/^server gpu-a is unreachable \(ECONNREFUSED\)$/);
    // Every job's prompt completed exactly once, on gpu-b; gpu-a completed none.
    const completed = b.executions.filter((record) => record.status === 'success').map((r) => r.promptId);
    expect(completed).toHaveLength(4);
    expect(new Set(completed).size).toBe(4);
    expect(a.executions.filter((record) => record.status === 'success')).toHaveLength(0);

    await a.faults.revive();
    await until(() => server(engine, 'gpu-a').state === 'up', 'gpu-a is checked again and answers');
    const after = await run(engine, text2image(['gpu-a']));
    expect(after.meta?.comfyui_server).toBe('gpu-a');
  });

  it('fails a prompt on a refused connection at once, without waiting out its silence', async () => {
    const { fakes } = await fleet([{}]);
    const [a] = fakes as [FakeComfyUI];
    const client = createComfyClient({ url: a.url, name: 'gpu-a', silenceMs: 60_000, maxFailedChecks: 5 });
    try {
      a.faults.afterStep(1, 'stall');
      const work = text2image();
      const compiled = COMPILERS.find((c) => c.pipeline === work.pipeline)!.compile({
        input: work.input,
        seed: 1,
        images: {},
        filenamePrefix: 'imagegen/kill/img',
        checkpoints: { 'sd1.5': SD15 },
      });
      const running = client.run(compiled.prompt, {
        promptId: crypto.randomUUID(),
        outputNodes: compiled.outputNodes,
        signal: AbortSignal.timeout(20_000),
      });
      await until(() => a.stalled, 'the prompt runs');
      await a.faults.kill();
      await expect(running).rejects.toBeInstanceOf(ServerRefusedError);
    } finally {
      await client.close();
    }
  });
});

describe('routing by what each server can run', () => {
  it('sends a job only to a server that has its checkpoint, and shows what each server runs', async () => {
    const { engine } = await fleet([
      { models: { checkpoints: [SD15] } },
      { models: { checkpoints: [SD15, SDXL] } },
    ]);
    const xl = job('/sdxl/text2image/v1', {
      prompt: 'a fox',
      negative_prompt: '',
      width: 64,
      height: 64,
      num_inference_steps: 2,
    });
    for (let n = 0; n < 3; n++) expect((await run(engine, xl)).meta?.comfyui_server).toBe('gpu-b');
    expect(server(engine, 'gpu-a').runs).toContain('/sdxl/text2image/v1');
    expect(server(engine, 'gpu-a').nodeClasses).toBeGreaterThan(500);
  });

  it('fails a job no server of its routing can run at once, naming what each lacks', async () => {
    const { engine } = await fleet([
      { models: { checkpoints: [SD15] } },
      { models: { checkpoints: [SD15, SDXL] } },
    ]);
    const xl = job(
      '/sdxl/text2image/v1',
      { prompt: 'a fox', negative_prompt: '', width: 64, height: 64, num_inference_steps: 2 },
      ['gpu-a'],
    );
    const failure = run(engine, xl);
    await expect(failure).rejects.toBeInstanceOf(EngineInputError);
    await expect(failure).rejects.toThrow(
      `no ComfyUI server here can run this graph: server gpu-a lacks the checkpoint '${SDXL}'`,
    );
  });

  it('keeps a job that needs a node pack off a server without it', async () => {
    const { engine } = await fleet([{ packs: [] }, {}]);
    expect(server(engine, 'gpu-a').runs).not.toContain('/faceswap/v1');
    expect(server(engine, 'gpu-b').runs).toContain('/faceswap/v1');
    expect(server(engine, 'gpu-a').runs).toContain('/sd/text2image/v1');
    const hidiffusion = text2image(undefined, { hidiffusion: true });
    expect((await run(engine, hidiffusion)).meta?.comfyui_server).toBe('gpu-b');
    await expect(run(engine, text2image(['gpu-a'], { hidiffusion: true }))).rejects.toThrow(
      /^no ComfyUI server here can run this graph: server gpu-a lacks node class ApplyRAUNetSimple, node class ApplyMSWMSAAttentionSimple$/,
    );
  });

  it('refuses at submission a request none of its servers can run, at the field it comes from', async () => {
    const { engine } = await fleet([
      { packs: [], models: { checkpoints: [SD15] } },
      { packs: [], models: { checkpoints: [SD15] } },
    ]);
    const input = (body: Record<string, unknown>) =>
      job('/sd/text2image/v1', { prompt: 'a fox', negative_prompt: '', ...body }).input;
    expect(engine.admit!('/sd/text2image/v1', input({}))).toBeNull();
    expect(engine.admit!('/sd/text2image/v1', input({ hidiffusion: true }))).toEqual({
      field: 'hidiffusion',
      type: 'value_error.server_capability',
      message:
        'no ComfyUI server here can run this graph: server gpu-a lacks node class ApplyRAUNetSimple, node class ApplyMSWMSAAttentionSimple; server gpu-b lacks node class ApplyRAUNetSimple, node class ApplyMSWMSAAttentionSimple',
    });
    // A pack several fields call for is blamed on the one the request sets.
    expect(engine.admit!('/sd/text2image/v1', input({ style: 0.5, samples: 2 }))).toMatchObject({
      field: 'style',
      type: 'value_error.server_capability',
      message: expect.stringContaining('lacks node class StyleAlignedBatchAlign'),
    });
    expect(engine.admit!('/sd/text2image/v1', input({ adain: true, samples: 2 }))?.field).toBe('adain');
    expect(engine.admit!('/sd/text2image/v1', input({ model_id: 'sdxl' }))).toMatchObject({
      field: 'model_id',
      message: expect.stringContaining(`lacks the checkpoint '${SDXL}'`),
    });
  });

  it('reads a server again before failing a job for a file it lacked: a model added since is found', async () => {
    const models = await mkdtemp(path.join(tmpdir(), 'imagegen-caps-'));
    scratch.push(models);
    const { engine } = await fleet([{ models: { checkpoints: [SD15] }, modelsDir: models }], {
      capabilitiesFreshMs: 0,
    });
    const xl = job('/sdxl/text2image/v1', {
      prompt: 'a fox',
      negative_prompt: '',
      width: 64,
      height: 64,
      num_inference_steps: 2,
    });
    await expect(run(engine, xl)).rejects.toThrow(`server gpu-a lacks the checkpoint '${SDXL}'`);
    await mkdir(path.join(models, 'checkpoints'), { recursive: true });
    await writeFile(path.join(models, 'checkpoints', SDXL), 'weights');
    expect((await run(engine, xl)).meta?.comfyui_server).toBe('gpu-a');
  });
});
