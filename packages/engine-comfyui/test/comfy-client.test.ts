import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import {
  type FakeComfyOptions,
  type FakeComfyUI,
  readCapture,
  startFakeComfyUI,
} from '@imagegen/comfyui-fake';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { createComfyClient } from '../src/client/index.ts';
import {
  type ApiNode,
  type ApiPrompt,
  type ComfyClient,
  PromptFailedError,
  PromptLostError,
  type PromptProgress,
  PromptRejectedError,
  ServerUnavailableError,
} from '../src/contracts.ts';

/** The ComfyUI client against the fake server: every behaviour and every fault it must survive. */

const RECORDED_TXT2IMG = readCapture<{ request: { body: { prompt: ApiPrompt } } }>(
  'txt2img-01-post-prompt-txt2img-64.json',
).request.body.prompt;

type Graph = Record<string, ApiNode>;

/** The recorded txt2img graph (checkpoint 4, prompts 6/7, latent 5, KSampler 3, decode 8, save 9). */
function txt2img(
  options: { width?: number; height?: number; batch?: number; steps?: number; seed?: number } = {},
): Graph {
  const graph = structuredClone(RECORDED_TXT2IMG) as Graph;
  const set = (id: string, inputs: Record<string, unknown>) => {
    graph[id] = { ...graph[id]!, inputs: { ...graph[id]!.inputs, ...inputs } };
  };
  set('5', { width: options.width ?? 64, height: options.height ?? 64, batch_size: options.batch ?? 1 });
  set('3', { steps: options.steps ?? 2, seed: options.seed ?? 1 });
  set('9', { filename_prefix: `imagegen/${randomUUID()}/img` });
  return graph;
}

let fake: FakeComfyUI | undefined;
let client: ComfyClient | undefined;

async function setUp(options: FakeComfyOptions = {}, clientOptions: Record<string, number> = {}) {
  fake = await startFakeComfyUI({ stepDelayMs: 5, ...options });
  client = createComfyClient({ url: fake.url, name: 'gpu-1', silenceMs: 200, ...clientOptions });
  return { fake, client };
}

afterEach(async () => {
  await client?.close();
  await fake?.close();
  client = undefined;
  fake = undefined;
});

function run(
  comfy: ComfyClient,
  graph: Graph,
  extra: { signal?: AbortSignal; onProgress?: (p: PromptProgress) => void } = {},
) {
  return comfy
    .run(graph, {
      promptId: randomUUID(),
      outputNodes: ['9'],
      signal: extra.signal ?? new AbortController().signal,
      onProgress: extra.onProgress,
    })
    .then((outputs) => outputs.files);
}

async function until(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('the ComfyUI client', () => {
  it('runs a prompt under its own ids: progress per step, only the output files, images of the graph size', async () => {
    const { fake, client } = await setUp();
    const progress: PromptProgress[] = [];
    const promptId = randomUUID();
    const graph = txt2img({ width: 96, height: 64, batch: 2, steps: 3 });
    // A preview node beside the saved one: its temp files are not the task's result.
    graph['10'] = { class_type: 'PreviewImage', inputs: { images: ['8', 0] } };
    const { files, texts } = await client.run(graph, {
      promptId,
      outputNodes: ['9'],
      signal: new AbortController().signal,
      onProgress: (step) => progress.push(step),
    });

    expect(fake.executions.map((execution) => execution.promptId)).toEqual([promptId]);
    expect(progress).toEqual([1, 2, 3].map((value) => ({ node: '3', value, max: 3 })));
    expect(files).toHaveLength(2);
    expect(texts).toEqual([]);
    expect(files.every((file) => file.type === 'output' && file.filename.startsWith('img_'))).toBe(true);
    // The socket's `executed` and `execution_success` messages told the outcome: no history read.
    expect(fake.counters.historyReads).toBe(0);
    for (const file of files) {
      const { width, height } = await sharp(await client.view(file)).metadata();
      expect([width, height]).toEqual([96, 64]);
    }

    // A second prompt goes under the same client id (one socket serves the client's prompts).
    await run(client, txt2img({ seed: 2 }));
    const [first, second] = fake.executions;
    expect(first!.clientId).toBeDefined();
    expect(second!.clientId).toBe(first!.clientId);
    expect(fake.counters.socketConnections).toBe(1);
  });

  it('tells each node of the prompt as it starts, in run order; a node served from the cache never starts', async () => {
    const { client } = await setUp();
    const started = async (graph: Graph) => {
      const nodes: string[] = [];
      await client.run(graph, {
        promptId: randomUUID(),
        outputNodes: ['9'],
        signal: new AbortController().signal,
        onNodeStart: (node) => nodes.push(node),
      });
      return nodes;
    };
    const graph = txt2img({ seed: 3 });
    const first = await started(graph);
    expect([...first].sort()).toEqual(Object.keys(graph).sort());
    expect(first.indexOf('4')).toBeLessThan(first.indexOf('3'));
    expect(first.at(-1)).toBe('9');
    // The same graph under a new prefix: only the SaveImage node runs again.
    graph['9'] = { ...graph['9']!, inputs: { ...graph['9']!.inputs, filename_prefix: 'imagegen/again/img' } };
    expect(await started(graph)).toEqual(['9']);
  });

  it.each([
    ['with the prompt it shows (event 4, as 0.3.64 sends it once asked)', true],
    ['from an older server, by the prompt running then (event 1)', 'without-metadata'],
  ] as const)(
    'passes on each preview frame of its prompt %s, and none of another prompt',
    async (_, previews) => {
      const { client } = await setUp({ previews, stepDelayMs: 20 });
      const follow = (width: number, seed: number) => {
        const frames: { type: string; data: Buffer }[] = [];
        const done = client.run(txt2img({ width, height: 64, steps: 3, seed }), {
          promptId: randomUUID(),
          outputNodes: ['9'],
          signal: new AbortController().signal,
          onPreview: (preview) => frames.push({ type: preview.contentType, data: preview.data }),
        });
        const seen = async () => {
          await done;
          return Promise.all(
            frames.map(async ({ type, data }) => {
              const { format, width, height } = await sharp(data).metadata();
              return { type, format, width, height };
            }),
          );
        };
        return seen();
      };
      // Two prompts at once on one socket: the second waits while the first samples.
      const [wide, narrow] = await Promise.all([follow(128, 11), follow(64, 12)]);
      // The fake's previews are JPEGs at latent size (an eighth), one per sampler step.
      const frame = { type: 'image/jpeg', format: 'jpeg', height: 8 };
      expect(wide).toEqual([1, 2, 3].map(() => ({ ...frame, width: 16 })));
      expect(narrow).toEqual([1, 2, 3].map(() => ({ ...frame, width: 8 })));
    },
  );

  it('answers server stats, node definitions and model folders', async () => {
    const { client } = await setUp({ models: { checkpoints: ['sd_xl_base_1.0.safetensors'] } });
    // The recording's server computes on the CPU (its /system_stats devices[0].type).
    expect(await client.stats()).toEqual({ comfyuiVersion: '0.3.64', queueRemaining: 0, device: 'cpu' });
    expect(Object.keys(await client.objectInfo())).toContain('KSampler');
    expect(await client.models('checkpoints')).toEqual(['sd_xl_base_1.0.safetensors']);
    expect(await client.models('upscale_models')).toEqual(['random-esrgan-x4-tiny.safetensors']);
    expect(await client.models('no_such_folder')).toEqual([]);
  });

  it('uploads input images and uses the name the server gives', async () => {
    const { client } = await setUp();
    const image = await sharp({ create: { width: 100, height: 60, channels: 3, background: '#345' } })
      .png()
      .toBuffer();
    const other = await sharp({ create: { width: 100, height: 60, channels: 3, background: '#543' } })
      .png()
      .toBuffer();
    const upload = (data: Buffer) => client.upload({ name: 'photo.png', data, contentType: 'image/png' });
    expect(await upload(image)).toBe('photo.png');
    expect(await upload(image)).toBe('photo.png');
    const renamed = await upload(other);
    expect(renamed).toBe('photo (1).png');

    // img2img from the renamed upload: the output has the uploaded image's size (cut to a multiple of 8).
    const graph = txt2img();
    graph['10'] = { class_type: 'LoadImage', inputs: { image: renamed } };
    graph['11'] = { class_type: 'VAEEncode', inputs: { pixels: ['10', 0], vae: ['4', 2] } };
    graph['3'] = { ...graph['3']!, inputs: { ...graph['3']!.inputs, latent_image: ['11', 0], denoise: 0.6 } };
    delete graph['5'];
    const [file] = await run(client, graph);
    const { width, height } = await sharp(await client.view(file!)).metadata();
    expect([width, height]).toEqual([96, 56]);
  });

  it('turns a refusal into plain words naming the node, the input and the server', async () => {
    const { fake, client } = await setUp();
    const unknownCheckpoint = txt2img();
    unknownCheckpoint['4'] = { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'x.safetensors' } };
    await expect(run(client, unknownCheckpoint)).rejects.toThrow(
      new PromptRejectedError("unknown checkpoint 'x.safetensors' on server gpu-1"),
    );
    await expect(run(client, txt2img({ steps: 0 }))).rejects.toThrow(
      new PromptRejectedError('KSampler (node 3): steps 0 is below the minimum 1 on server gpu-1'),
    );
    fake.faults.refuse();
    await expect(run(client, txt2img())).rejects.toThrow(
      new PromptRejectedError("unknown checkpoint 'no_such_model.safetensors' on server gpu-1"),
    );
    expect(fake.executions).toHaveLength(0);
  });

  it('fails a prompt accepted with node_errors (the dropped-output trap) and takes it back', async () => {
    const { fake, client } = await setUp({ stepDelayMs: 200 });
    const graph = txt2img({ steps: 20 });
    // A second output whose input image does not exist: ComfyUI queues output 9 alone and says so.
    graph['10'] = { class_type: 'LoadImage', inputs: { image: 'missing.png' } };
    graph['11'] = { class_type: 'SaveImage', inputs: { images: ['10', 0], filename_prefix: 'other' } };
    await expect(run(client, graph)).rejects.toThrow(
      new PromptRejectedError('LoadImage (node 10): Invalid image file: missing.png on server gpu-1'),
    );
    await until(() => fake.executions.every((execution) => execution.status !== undefined));
    expect(fake.executions.every((execution) => execution.status === 'interrupted')).toBe(true);
    expect(fake.counters.queueDeletes + fake.counters.interrupts).toBe(1);
  });

  it('fails with the node type and the exception when a node raises', async () => {
    const { fake, client } = await setUp();
    fake.faults.failNode({
      classType: 'VAEDecode',
      exceptionType: 'RuntimeError',
      message: 'expected 4 channels, got 16',
    });
    await expect(run(client, txt2img())).rejects.toThrow(
      new PromptFailedError(
        'VAEDecode (node 8) failed on server gpu-1: RuntimeError: expected 4 channels, got 16',
      ),
    );
  });

  it('fails a prompt that someone else interrupted', async () => {
    const { fake, client } = await setUp({ stepDelayMs: 20 });
    const progress: PromptProgress[] = [];
    const running = run(client, txt2img({ steps: 50 }), { onProgress: (step) => progress.push(step) });
    await until(() => progress.length > 0);
    await fetch(`${fake.url}/interrupt`, { method: 'POST' });
    await expect(running).rejects.toThrow(
      new PromptFailedError('KSampler (node 3) was interrupted on server gpu-1'),
    );
  });

  it('polls history when the socket stays silent', async () => {
    const { fake, client } = await setUp({}, { silenceMs: 50 });
    fake.faults.silence(true);
    const progress: PromptProgress[] = [];
    const files = await run(client, txt2img({ batch: 3 }), { onProgress: (step) => progress.push(step) });
    expect(files).toHaveLength(3);
    expect(progress).toEqual([]);
    expect(fake.counters.historyReads).toBeGreaterThan(0);
  });

  it('still finds the result when the socket drops as the prompt ends', async () => {
    const { fake, client } = await setUp({ stepDelayMs: 20 }, { silenceMs: 5_000, reconnectDelayMs: 20 });
    // Dropped at the last step: the prompt ends while the client is cut off, so its end is lost.
    fake.faults.afterStep(6, 'drop-websocket');
    const started = Date.now();
    const files = await run(client, txt2img({ steps: 6 }));
    expect(files).toHaveLength(1);
    // Found by asking history as the socket dropped (or on the reconnect), not by waiting out the silence.
    expect(fake.counters.historyReads).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('reports a prompt lost when the server restarts and forgets it', async () => {
    const { fake, client } = await setUp({ stepDelayMs: 20 }, { silenceMs: 5_000, reconnectDelayMs: 20 });
    fake.faults.afterStep(2, 'restart');
    const started = Date.now();
    await expect(run(client, txt2img({ steps: 10 }))).rejects.toThrow(PromptLostError);
    // Told on reconnecting to the restarted server, not after the silence.
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(fake.counters.restarts).toBe(1);
    // The server works again for the resubmission.
    expect(await run(client, txt2img())).toHaveLength(1);
  });

  it('reports the server unavailable when it stops answering mid-run', async () => {
    const { fake, client } = await setUp(
      { stepDelayMs: 20 },
      { silenceMs: 50, requestTimeoutMs: 200, maxFailedChecks: 2 },
    );
    fake.faults.afterStep(1, 'die');
    await expect(run(client, txt2img({ steps: 10 }))).rejects.toThrow(
      /^server gpu-1 did not answer GET \/history\/.+ within 0.2 s$/,
    );
    await expect(client.stats()).rejects.toBeInstanceOf(ServerUnavailableError);
  });

  it('reports the server unavailable when nothing listens', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    client = createComfyClient({ url: `http://127.0.0.1:${port}`, connectTimeoutMs: 200 });
    await expect(client.stats()).rejects.toBeInstanceOf(ServerUnavailableError);
    await expect(run(client, txt2img())).rejects.toThrow(
      /^server 127\.0\.0\.1:\d+ is unreachable \(ECONNREFUSED\)$/,
    );
  });

  it('on abort interrupts its running prompt, and only that one', async () => {
    const { fake, client } = await setUp({ stepDelayMs: 20 });
    const controller = new AbortController();
    const progress: PromptProgress[] = [];
    const running = run(client, txt2img({ steps: 50 }), {
      signal: controller.signal,
      onProgress: (step) => progress.push(step),
    });
    const queued = run(client, txt2img({ seed: 9 }));
    await until(() => progress.length > 0);
    controller.abort(new Error('task cancelled'));
    await expect(running).rejects.toThrow('task cancelled');
    expect(await queued).toHaveLength(1);
    expect(fake.executions.map((execution) => execution.status)).toEqual(['interrupted', 'success']);
    expect(fake.counters.interrupts).toBe(1);
  });

  it('on abort removes its pending prompt from the queue without touching the running one', async () => {
    const { fake, client } = await setUp({ stepDelayMs: 20 });
    const progress: PromptProgress[] = [];
    const running = run(client, txt2img({ steps: 10 }), { onProgress: (step) => progress.push(step) });
    const controller = new AbortController();
    const pending = run(client, txt2img({ seed: 5 }), { signal: controller.signal });
    await until(() => progress.length > 0);
    controller.abort(new Error('task cancelled'));
    await expect(pending).rejects.toThrow('task cancelled');
    expect(await running).toHaveLength(1);
    expect(fake.executions.map((execution) => execution.status)).toEqual(['success']);
    expect(fake.counters.queueDeletes).toBe(1);
    expect(fake.counters.interrupts).toBe(0);
  });

  it('leaves no socket open once closed', async () => {
    const { fake, client } = await setUp();
    await run(client, txt2img());
    expect(fake.counters.openSockets).toBe(1);
    await client.close();
    await until(() => fake.counters.openSockets === 0);
    await expect(run(client, txt2img())).rejects.toThrow('the client of server gpu-1 is closed');
  });
});
