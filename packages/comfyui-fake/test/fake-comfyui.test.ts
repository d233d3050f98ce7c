import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ApiNode, FileRef } from '@imagegen/engine-comfyui/engine';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type FakeComfyOptions, type FakeComfyUI, startFakeComfyUI } from '../src/fake-comfyui/index.ts';

/**
 * The fake ComfyUI's own behaviour beyond the recordings: images of the size and count the graph
 * asks for, deterministic pixels, the output cache, one queue in priority order, model lists, and
 * the fault switches (restart, die, refuse, zero time).
 */

type Graph = Record<string, ApiNode>;

const RECORDED_TXT2IMG = (
  JSON.parse(
    readFileSync(
      path.resolve(import.meta.dirname, '../comfyui-captures/txt2img-01-post-prompt-txt2img-64.json'),
      'utf8',
    ),
  ) as { request: { body: { prompt: Graph } } }
).request.body.prompt;

/** The recorded txt2img graph with the latent and sampler set; `tail` replaces the decode → save end. */
function graph(
  options: { width?: number; height?: number; batch?: number; seed?: number; prefix?: string } = {},
): Graph {
  const out = structuredClone(RECORDED_TXT2IMG);
  out['5'] = {
    class_type: 'EmptyLatentImage',
    inputs: { width: options.width ?? 64, height: options.height ?? 64, batch_size: options.batch ?? 1 },
  };
  out['3'] = { ...out['3']!, inputs: { ...out['3']!.inputs, seed: options.seed ?? 1 } };
  out['9'] = {
    class_type: 'SaveImage',
    inputs: { images: ['8', 0], filename_prefix: options.prefix ?? randomUUID() },
  };
  return out;
}

let fake: FakeComfyUI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function start(options: FakeComfyOptions = {}): Promise<FakeComfyUI> {
  fake = await startFakeComfyUI({ stepDelayMs: 1, ...options });
  return fake;
}

async function post(server: FakeComfyUI, body: Record<string, unknown>) {
  const response = await fetch(`${server.url}/prompt`, { method: 'POST', body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

interface Entry {
  outputs: Record<string, { images: FileRef[] }>;
  status: { status_str: string; messages: [string, Record<string, unknown>][] };
}

/** Submits a graph and waits for its history entry. */
async function runGraph(
  server: FakeComfyUI,
  prompt: Graph,
  extra: Record<string, unknown> = {},
): Promise<Entry> {
  const { status, body } = await post(server, { prompt, ...extra });
  expect(status, JSON.stringify(body)).toBe(200);
  return history(server, String(body['prompt_id']));
}

async function history(server: FakeComfyUI, promptId: string): Promise<Entry> {
  for (let tries = 0; tries < 2000; tries++) {
    const body = (await (await fetch(`${server.url}/history/${promptId}`)).json()) as Record<string, Entry>;
    if (body[promptId]) return body[promptId];
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no history for ${promptId}`);
}

async function view(server: FakeComfyUI, file: FileRef): Promise<Buffer> {
  const query = new URLSearchParams({ filename: file.filename, subfolder: file.subfolder, type: file.type });
  const response = await fetch(`${server.url}/view?${query}`);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

async function sizes(server: FakeComfyUI, entry: Entry, node = '9'): Promise<string[]> {
  const images = entry.outputs[node]?.images ?? [];
  return Promise.all(
    images.map(async (file) => {
      const { width, height } = await sharp(await view(server, file)).metadata();
      return `${width}x${height}`;
    }),
  );
}

describe('images of the graph', () => {
  it('an empty latent gives its size and batch', async () => {
    const server = await start();
    expect(await sizes(server, await runGraph(server, graph({ width: 96, height: 64, batch: 3 })))).toEqual([
      '96x64',
      '96x64',
      '96x64',
    ]);
  });

  it("Stable Cascade's empty latent gives the picture's size and batch", async () => {
    const server = await start({ models: { vae: ['stage_a.safetensors'] } });
    const cascade: Graph = {
      '1': {
        class_type: 'StableCascade_EmptyLatentImage',
        inputs: { width: 256, height: 320, compression: 42, batch_size: 2 },
      },
      '2': { class_type: 'VAELoader', inputs: { vae_name: 'stage_a.safetensors' } },
      '3': { class_type: 'VAEDecode', inputs: { samples: ['1', 1], vae: ['2', 0] } },
      '9': { class_type: 'SaveImage', inputs: { images: ['3', 0], filename_prefix: randomUUID() } },
    };
    expect(await sizes(server, await runGraph(server, cascade))).toEqual(['256x320', '256x320']);
  });

  it('scales, hires passes, model upscales and outpaint padding change the size', async () => {
    const server = await start();
    const base = graph({ width: 64, height: 48 });
    const ends: Record<string, [Graph, string]> = {
      'latent upscale by 1.5 and a second pass': [
        {
          '20': {
            class_type: 'LatentUpscaleBy',
            inputs: { samples: ['3', 0], upscale_method: 'nearest-exact', scale_by: 1.5 },
          },
          '21': {
            class_type: 'KSampler',
            inputs: { ...base['3']!.inputs, latent_image: ['20', 0], denoise: 0.5 },
          },
          '8': { class_type: 'VAEDecode', inputs: { samples: ['21', 0], vae: ['4', 2] } },
        },
        '96x72',
      ],
      'an upscale model (x4)': [
        {
          '20': {
            class_type: 'UpscaleModelLoader',
            inputs: { model_name: 'random-esrgan-x4-tiny.safetensors' },
          },
          '21': {
            class_type: 'ImageUpscaleWithModel',
            inputs: { upscale_model: ['20', 0], image: ['8', 0] },
          },
          '9': { class_type: 'SaveImage', inputs: { images: ['21', 0], filename_prefix: randomUUID() } },
        },
        '256x192',
      ],
      'an image scale': [
        {
          '20': {
            class_type: 'ImageScale',
            inputs: { image: ['8', 0], upscale_method: 'bilinear', width: 100, height: 0, crop: 'disabled' },
          },
          '9': { class_type: 'SaveImage', inputs: { images: ['20', 0], filename_prefix: randomUUID() } },
        },
        '100x75',
      ],
      'outpaint padding': [
        {
          '20': {
            class_type: 'ImagePadForOutpaint',
            inputs: { image: ['8', 0], left: 16, top: 0, right: 16, bottom: 8, feathering: 40 },
          },
          '9': { class_type: 'SaveImage', inputs: { images: ['20', 0], filename_prefix: randomUUID() } },
        },
        '96x56',
      ],
    };
    for (const [what, [nodes, size]] of Object.entries(ends)) {
      const entry = await runGraph(server, { ...base, ...nodes, '9': nodes['9'] ?? { ...base['9']! } });
      expect(await sizes(server, entry), what).toEqual([size]);
    }
  });

  it('the same graph draws the same pixels; another seed draws others', async () => {
    const server = await start();
    const first = await view(server, (await runGraph(server, graph({ seed: 7 }))).outputs['9']!.images[0]!);
    const again = await view(server, (await runGraph(server, graph({ seed: 7 }))).outputs['9']!.images[0]!);
    const other = await view(server, (await runGraph(server, graph({ seed: 8 }))).outputs['9']!.images[0]!);
    // (The PNGs differ in the graph they carry: its own filename prefix each.)
    const pixels = (png: Buffer) => sharp(png).raw().toBuffer();
    expect((await pixels(again)).equals(await pixels(first))).toBe(true);
    expect((await pixels(other)).equals(await pixels(first))).toBe(false);
  });
});

describe('metadata in the saved PNG', () => {
  it('writes the graph into a tEXt chunk after the header, as ComfyUI’s SaveImage does', async () => {
    const server = await start();
    const png = await view(server, (await runGraph(server, graph({ seed: 9 }))).outputs['9']!.images[0]!);
    expect(png.toString('latin1', 12 + 25, 16 + 25)).toBe('tEXt');
    const length = png.readUInt32BE(33);
    const [keyword, text] = png.toString('latin1', 41, 41 + length).split('\0');
    expect(keyword).toBe('prompt');
    expect(JSON.parse(text!)['3'].inputs.seed).toBe(9);
    // Still a PNG every decoder reads.
    expect((await sharp(png).metadata()).format).toBe('png');
  });
});

describe('the output cache', () => {
  it('an identical graph runs in no time and points at the old files; a new prefix runs again', async () => {
    const server = await start();
    const prompt = graph({ prefix: 'same' });
    const first = await runGraph(server, prompt);
    const identical = await runGraph(server, prompt);
    expect(identical.outputs).toEqual(first.outputs);
    const cached = identical.status.messages.find(([event]) => event === 'execution_cached')![1];
    expect([...(cached['nodes'] as string[])].sort()).toEqual(Object.keys(prompt).sort());

    const fresh = await runGraph(server, {
      ...prompt,
      '9': { ...prompt['9']!, inputs: { ...prompt['9']!.inputs, filename_prefix: 'other' } },
    });
    expect(fresh.outputs['9']!.images[0]!.filename).toBe('other_00001_.png');
    const freshCached = fresh.status.messages.find(([event]) => event === 'execution_cached')![1];
    expect(freshCached['nodes']).not.toContain('9');
  });
});

describe('the queue', () => {
  it('runs one prompt at a time in priority order and counts the longest queue', async () => {
    const server = await start({ stepDelayMs: 100 });
    const ids: string[] = [];
    for (const seed of [1, 2, 3])
      ids.push(String((await post(server, { prompt: graph({ seed }) })).body['prompt_id']));
    const front = String((await post(server, { prompt: graph({ seed: 4 }), front: true })).body['prompt_id']);
    await history(server, ids[2]!);
    expect(server.executions.map((execution) => execution.promptId)).toEqual([ids[0], front, ids[1], ids[2]]);
    const runs = server.executions;
    for (let i = 1; i < runs.length; i++)
      expect(runs[i]!.startedAt).toBeGreaterThanOrEqual(runs[i - 1]!.endedAt!);
    expect(server.counters.maxQueue).toBe(4);
    expect(server.counters.promptsQueued).toBe(4);
  });

  it('runs a long prompt in no time when told to (zero time)', async () => {
    const server = await start({ stepDelayMs: 50 });
    server.faults.zeroTime();
    const prompt = graph();
    prompt['3'] = { ...prompt['3']!, inputs: { ...prompt['3']!.inputs, steps: 200 } };
    const started = performance.now();
    await runGraph(server, prompt);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('accepts a model it is given and refuses one it does not have', async () => {
    const server = await start({
      models: { checkpoints: ['sd_xl_base_1.0.safetensors'], ipadapter: ['ip-adapter_sdxl.safetensors'] },
    });
    // A node pack's folder exists once files are given for it.
    expect(await (await fetch(`${server.url}/models/ipadapter`)).json()).toEqual([
      'ip-adapter_sdxl.safetensors',
    ]);
    const refused = await post(server, { prompt: graph() });
    expect(refused.status).toBe(400);
    const sdxl = graph();
    sdxl['4'] = { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'sd_xl_base_1.0.safetensors' } };
    expect((await runGraph(server, sdxl)).status.status_str).toBe('success');
    const info = (await (await fetch(`${server.url}/api/object_info/CheckpointLoaderSimple`)).json()) as {
      CheckpointLoaderSimple: { input: { required: { ckpt_name: [string[]] } } };
    };
    expect(info.CheckpointLoaderSimple.input.required.ckpt_name[0]).toEqual(['sd_xl_base_1.0.safetensors']);
  });

  it('lists a legacy model folder under its current name, as ComfyUI does', async () => {
    const server = await start({ models: { unet: ['iclight_sd15_fc.safetensors'] } });
    // folder_paths maps `unet` to `diffusion_models`; the /models route knows only the latter.
    expect((await fetch(`${server.url}/models/unet`)).status).toBe(404);
    expect(await (await fetch(`${server.url}/models/diffusion_models`)).json()).toContain(
      'iclight_sd15_fc.safetensors',
    );
    expect(await (await fetch(`${server.url}/models`)).json()).not.toContain('unet');
    const info = (await (await fetch(`${server.url}/object_info/LoadAndApplyICLightUnet`)).json()) as {
      LoadAndApplyICLightUnet: { input: { required: { model_path: [string[]] } } };
    };
    expect(info.LoadAndApplyICLightUnet.input.required.model_path[0]).toEqual([
      'iclight_sd15_fc.safetensors',
    ]);
  });
});

describe('fault switches', () => {
  it('a restart forgets queue and history but keeps the files; the socket gets cut', async () => {
    const server = await start();
    const entry = await runGraph(server, graph());
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws`);
    const greetings: string[] = [];
    const greeted = (data: unknown) => {
      const sid = JSON.parse(String(data)).data.sid;
      if (sid) greetings.push(sid);
    };
    ws.on('message', greeted);
    await new Promise((resolve) => ws.once('open', resolve));
    const closed = new Promise((resolve) => ws.once('close', resolve));
    server.faults.restart();
    await closed;
    const history = (await (await fetch(`${server.url}/history`)).json()) as object;
    expect(history).toEqual({});
    expect(await view(server, entry.outputs['9']!.images[0]!)).toBeInstanceOf(Buffer);
    // A socket without a client id gets a new sid from the restarted server.
    const again = new WebSocket(`${server.url.replace('http', 'ws')}/ws`);
    again.on('message', greeted);
    await new Promise((resolve) => again.once('message', resolve));
    again.close();
    expect(greetings).toHaveLength(2);
    expect(greetings[1]).not.toBe(greetings[0]);
  });

  it('holds a prompt after a stalled step until resumed, then finishes it', async () => {
    const server = await start({ stepDelayMs: 0 });
    server.faults.afterStep(1, 'stall');
    const { body } = await post(server, { prompt: graph() });
    for (let tries = 0; !server.stalled; tries++) {
      expect(tries).toBeLessThan(1000);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const queue = (await (await fetch(`${server.url}/queue`)).json()) as { queue_running: unknown[] };
    expect(queue.queue_running).toHaveLength(1);
    server.faults.resume();
    const entry = await history(server, String(body['prompt_id']));
    expect(entry.status.status_str).toBe('success');
    expect(server.stalled).toBe(false);
    expect(server.executions.at(-1)!.status).toBe('success');
  });

  it('a dead server answers nothing until it restarts', async () => {
    const server = await start();
    server.faults.die();
    await expect(fetch(`${server.url}/system_stats`, { signal: AbortSignal.timeout(200) })).rejects.toThrow();
    server.faults.restart();
    expect((await fetch(`${server.url}/system_stats`)).status).toBe(200);
  });

  it('refuses every prompt with a given body until told to stop', async () => {
    const server = await start();
    const body = {
      error: { type: 'prompt_no_outputs', message: 'Prompt has no outputs', details: '', extra_info: {} },
      node_errors: {},
    };
    server.faults.refuse(body);
    expect(await post(server, { prompt: graph() })).toEqual({ status: 400, body });
    server.faults.refuse(false);
    expect((await post(server, { prompt: graph() })).status).toBe(200);
  });

  it('sends a JPEG preview frame after each step when previews are on', async () => {
    const server = await start({ previews: true });
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws?clientId=watcher`);
    const frames: Buffer[] = [];
    ws.on('message', (data, isBinary) => isBinary && frames.push(data as Buffer));
    await new Promise((resolve) => ws.once('open', resolve));
    await runGraph(server, graph(), { client_id: 'watcher' });
    ws.close();
    expect(frames).toHaveLength(2);
    for (const frame of frames) {
      expect([frame.readUInt32BE(0), frame.readUInt32BE(4)]).toEqual([1, 1]);
      expect(frame.subarray(8, 10)).toEqual(Buffer.from([0xff, 0xd8]));
    }
  });
});

/** Checkpoint 4 and prompt 6 of the recorded graph, trained on latent 5 by node 20; node 21 saves the LoRA. */
function training(options: { steps?: number; prefix?: string; stepsInName?: boolean } = {}): Graph {
  const out = graph();
  for (const id of ['3', '7', '8', '9']) delete out[id];
  out['20'] = {
    class_type: 'TrainLoraNode',
    inputs: {
      model: ['4', 0],
      latents: ['5', 0],
      positive: ['6', 0],
      batch_size: 1,
      grad_accumulation_steps: 1,
      steps: options.steps ?? 3,
      learning_rate: 0.0005,
      rank: 8,
      optimizer: 'AdamW',
      loss_function: 'MSE',
      seed: 1,
      training_dtype: 'bf16',
      lora_dtype: 'bf16',
      algorithm: 'LoRA',
      gradient_checkpointing: true,
      existing_lora: '[None]',
    },
  };
  out['21'] = {
    class_type: 'SaveLoRANode',
    inputs: {
      lora: ['20', 1],
      prefix: options.prefix ?? `imagegen/${randomUUID()}/lora`,
      ...(options.stepsInName ? { steps: ['20', 3] } : {}),
    },
  };
  return out;
}

/** Every message the socket of `clientId` carries while `run` goes on. */
async function watching<T>(server: FakeComfyUI, clientId: string, run: () => Promise<T>) {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws?clientId=${clientId}`);
  const messages: { type: string; data: Record<string, unknown> }[] = [];
  ws.on('message', (data, isBinary) => !isBinary && messages.push(JSON.parse(String(data))));
  await new Promise((resolve) => ws.once('open', resolve));
  const result = await run();
  ws.close();
  return { result, messages };
}

describe('training', () => {
  it('trains as ComfyUI 0.3.64 does: no progress message, and a LoRA saved under its prefix that nothing reports', async () => {
    const server = await start();
    const { result: entry, messages } = await watching(server, 'trainer', () =>
      runGraph(server, training({ prefix: 'imagegen/t1/lora' }), { client_id: 'trainer' }),
    );
    expect(entry.status.status_str).toBe('success');
    expect(entry.outputs).toEqual({});
    const started = messages.filter((m) => m.type === 'executing').map((m) => m.data.node);
    expect(started).toEqual(expect.arrayContaining(['20', '21']));
    expect(messages.filter((m) => m.type === 'progress')).toEqual([]);
    expect(messages.filter((m) => m.type === 'executed')).toEqual([]);

    const response = await fetch(
      `${server.url}/view?filename=lora_00001_.safetensors&subfolder=imagegen/t1&type=output`,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(response.headers.get('content-disposition')).toBe('filename="lora_00001_.safetensors"');
    const file = Buffer.from(await response.arrayBuffer());
    const header = JSON.parse(file.subarray(8, 8 + Number(file.readBigUInt64LE(0))).toString());
    expect(header['diffusion_model.input_blocks.1.1.proj_in.lora_down.weight']).toMatchObject({
      dtype: 'BF16',
      shape: [8, 4],
    });
  });

  it("numbers a LoRA after the files under its prefix, as ComfyUI's get_save_image_path does, the step count in the name when linked", async () => {
    const server = await start();
    const prefix = 'imagegen/t2/lora';
    await runGraph(server, training({ prefix }));
    await runGraph(server, training({ prefix, steps: 4 }));
    await runGraph(server, training({ prefix, steps: 5, stepsInName: true }));
    const status = async (name: string) =>
      (await fetch(`${server.url}/view?filename=${name}&subfolder=imagegen/t2&type=output`)).status;
    expect(await status('lora_00001_.safetensors')).toBe(200);
    expect(await status('lora_00002_.safetensors')).toBe(200);
    expect(await status('lora_5_steps_00003_.safetensors')).toBe(200);
  });

  it('reports each training step as later releases do, with trainingStepProgress', async () => {
    const server = await start({ trainingStepProgress: true });
    const { messages } = await watching(server, 'trainer', () =>
      runGraph(server, training({ steps: 3 }), { client_id: 'trainer' }),
    );
    expect(
      messages.filter((m) => m.type === 'progress').map((m) => [m.data.node, m.data.value, m.data.max]),
    ).toEqual([
      ['20', 1, 3],
      ['20', 2, 3],
      ['20', 3, 3],
    ]);
  });

  it("sees an interrupt only when 0.3.64's training ends, then stops before the next node", async () => {
    const server = await start({ stepDelayMs: 100 });
    const { body } = await post(server, { prompt: training({ steps: 4 }) });
    const promptId = String(body['prompt_id']);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await fetch(`${server.url}/interrupt`, { method: 'POST', body: JSON.stringify({ prompt_id: promptId }) });
    const entry = await history(server, promptId);
    const [ran] = server.executions;
    expect(ran!.endedAt! - ran!.startedAt).toBeGreaterThanOrEqual(4 * 100 - 20);
    expect(entry.status.messages.at(-1)).toEqual([
      'execution_interrupted',
      expect.objectContaining({ node_id: '21', node_type: 'SaveLoRANode' }),
    ]);
  });
});

describe('routes', () => {
  it('answers under /api/ too, and 404 and 405 as aiohttp does', async () => {
    const server = await start();
    expect((await fetch(`${server.url}/api/prompt`)).status).toBe(200);
    const missing = await fetch(`${server.url}/nope`);
    expect([missing.status, await missing.text()]).toEqual([404, '404: Not Found']);
    const wrongMethod = await fetch(`${server.url}/system_stats`, { method: 'POST' });
    expect([wrongMethod.status, await wrongMethod.text()]).toEqual([405, '405: Method Not Allowed']);
  });
});
