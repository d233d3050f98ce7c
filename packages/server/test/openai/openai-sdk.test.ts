import { EngineInputError, type EngineJob, type RunContext } from '@imagegen/engines';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { ApiHarness } from '../support/api-harness.ts';
import { gatedApi, uniqueName } from '../support/gated-engine.ts';

/**
 * The OpenAI Images API as OpenAI's own SDK (the `openai` npm package) calls it, against the real
 * API, its worker and a test engine that draws plain PNGs of the requested size: generations and
 * edits in both response formats, the model list, and the errors in OpenAI's shape, which the SDK
 * raises as its own error classes.
 */

/** A request that outlives its wait here: 1.5 s (OPENAI_WAIT_SECONDS is 300 by default). */
const WAIT_MS = 1500;
const gated = gatedApi({ openAi: { waitMs: WAIT_MS } });

function sdk(api: ApiHarness, key = api.alice.key, maxRetries = 0): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${api.url}/v1`, maxRetries });
}

async function decoded(bytes: Buffer) {
  const { format, width, height } = await sharp(bytes).metadata();
  return { format, width, height };
}

async function fetched(url: string): Promise<Buffer> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

/** The owner's latest task of a pipeline, as the task listing gives it (its validated request). */
async function latestTask(
  api: ApiHarness,
  pipeline: string,
): Promise<{ id: string; request: Record<string, unknown> }> {
  const listed = await api.request('GET', `/tasks/v1?pipeline=${encodeURIComponent(pipeline)}&limit=1`);
  return (listed.body as { tasks: { id: string; request: Record<string, unknown> }[] }).tasks[0]!;
}

async function picture(width: number, height: number, channels: 3 | 4 = 3): Promise<Buffer> {
  return sharp({ create: { width, height, channels, background: { r: 40, g: 90, b: 200, alpha: 1 } } })
    .png()
    .toBuffer();
}

describe('generations through the openai SDK', () => {
  it('runs the default model and answers links to PNGs at its first size', async () => {
    const { api } = gated;
    const before = Math.floor(Date.now() / 1000);
    const answer = await sdk(api).images.generate({ prompt: 'a lighthouse at dawn' });
    expect(answer.created).toBeGreaterThanOrEqual(before);
    expect(answer.data).toHaveLength(1);
    expect(answer.usage).toBeUndefined();
    const url = answer.data![0]!.url!;
    expect(url.startsWith(`${api.url}/files/`)).toBe(true);
    expect(await decoded(await fetched(url))).toEqual({ format: 'png', width: 1024, height: 1024 });
    const task = await latestTask(api, '/generate/v3');
    // The prompt as written (no style added), n as samples.
    expect(task.request).toMatchObject({ prompt: 'a lighthouse at dawn', style: null, samples: 1 });
  });

  it('answers b64_json when asked, n images at the size of the family nearest the one asked for', async () => {
    const answer = await sdk(gated.api).images.generate({
      model: 'sdxl',
      prompt: 'a fox in the snow',
      n: 2,
      size: '1536x1024',
      quality: 'high',
      response_format: 'b64_json',
    });
    expect(answer.data).toHaveLength(2);
    for (const image of answer.data!) {
      expect(image.url).toBeUndefined();
      // 1536 × 1024 is 3:2; of SDXL's sizes 1216 × 832 is nearest in shape.
      expect(await decoded(Buffer.from(image.b64_json!, 'base64'))).toEqual({
        format: 'png',
        width: 1216,
        height: 832,
      });
    }
    const task = await latestTask(gated.api, '/sdxl/text2image/v1');
    expect(task.request).toMatchObject({ samples: 2, width: 1216, height: 832, num_inference_steps: 30 });
  });

  it("answers a GPT image name as OpenAI's GPT image models answer: base64, in the format asked for", async () => {
    const answer = await sdk(gated.api).images.generate({
      model: 'gpt-image-1',
      prompt: 'a red bicycle',
      size: '1024x1536',
      quality: 'low',
      output_format: 'jpeg',
      output_compression: 60,
    });
    expect(answer).toMatchObject({
      background: 'opaque',
      output_format: 'jpeg',
      quality: 'low',
      size: '832x1216',
    });
    expect(await decoded(Buffer.from(answer.data![0]!.b64_json!, 'base64'))).toEqual({
      format: 'jpeg',
      width: 832,
      height: 1216,
    });
  });

  it('refuses what a model cannot do as OpenAI does: 400 naming the parameter', async () => {
    const client = sdk(gated.api);
    const refused = async (body: Parameters<OpenAI['images']['generate']>[0]) => {
      const error = await client.images.generate(body).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      return error as InstanceType<typeof OpenAI.BadRequestError>;
    };
    const model = await refused({ model: 'midjourney', prompt: 'x' });
    expect(model).toMatchObject({
      status: 400,
      param: 'model',
      code: 'invalid_value',
      type: 'invalid_request_error',
    });
    expect(model.message).toContain(
      "Invalid value: 'midjourney'. Supported values are: 'flux-schnell', 'sdxl'",
    );
    expect(await refused({ model: 'sd3.5', prompt: 'x', n: 3 })).toMatchObject({
      param: 'n',
      code: 'integer_above_max_value',
    });
    expect(await refused({ prompt: 'x', size: 'huge' as '1024x1024' })).toMatchObject({ param: 'size' });
    expect(await refused({ prompt: '' })).toMatchObject({ param: 'prompt', code: 'empty_string' });
    expect(await refused({ prompt: 'x', response_format: 'gif' as 'url' })).toMatchObject({
      param: 'response_format',
    });
    expect(await refused({ prompt: 'x', background: 'transparent' })).toMatchObject({
      param: 'background',
      code: 'unsupported_value',
    });
  });

  it('answers a wrong key 401 and a missing one too, in OpenAI shape', async () => {
    const wrong = await sdk(gated.api, 'ig_wrongwrongwrongwrongwrongwrong1')
      .images.generate({ prompt: 'x' })
      .catch((caught: unknown) => caught);
    expect(wrong).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(wrong).toMatchObject({
      status: 401,
      code: 'invalid_api_key',
      message: '401 Incorrect API key provided.',
    });
    const missing = await fetch(`${gated.api.url}/v1/images/generations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'x' }),
    });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({
      error: {
        message:
          "You didn't provide an API key: send it as Authorization: Bearer <key> (or in the API-Key header).",
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
  });

  it('lists every model name, and answers one or 404', async () => {
    const client = sdk(gated.api);
    const names = [];
    for await (const model of client.models.list()) names.push(model.id);
    expect(names).toEqual([
      'flux-schnell',
      'sdxl',
      'sd1.5',
      'sd3.5',
      'gpt-image-1',
      'gpt-image-1-mini',
      'gpt-image-1.5',
      'dall-e-3',
      'dall-e-2',
    ]);
    expect(await client.models.retrieve('dall-e-3')).toMatchObject({
      id: 'dall-e-3',
      object: 'model',
      owned_by: 'imagegen',
    });
    const missing = await client.models.retrieve('dall-e-4').catch((caught: unknown) => caught);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing).toMatchObject({ param: 'model', code: 'model_not_found' });
  });
});

describe('edits through the openai SDK', () => {
  it('runs image to image without a mask, at the family size nearest the image, as links', async () => {
    const { api } = gated;
    const answer = await sdk(api).images.edit({
      model: 'sdxl',
      image: await toFile(await picture(640, 480), 'photo.png', { type: 'image/png' }),
      prompt: 'the same scene at night',
      response_format: 'url',
    });
    // 640 × 480 is 4:3: SDXL's 1152 × 896 is nearest in shape.
    expect(await decoded(await fetched(answer.data![0]!.url!))).toEqual({
      format: 'png',
      width: 1152,
      height: 896,
    });
    const task = await latestTask(api, '/sdxl/image2image/v1');
    expect(task.request).toMatchObject({ prompt: 'the same scene at night', width: 1152, height: 896 });
    // The image was stored as an upload of the owner's, and the task read it from there.
    const init = String(task.request.init_image);
    expect(init.startsWith(`${api.url}/files/`)).toBe(true);
    expect(await decoded(await fetched(init))).toEqual({ format: 'png', width: 640, height: 480 });
  });

  it("runs inpainting with a mask, read as OpenAI's (transparent: edit) and made ours (white: repaint)", async () => {
    const { api } = gated;
    // Left half transparent (to edit), right half opaque black (to keep).
    const rgba = Buffer.alloc(64 * 48 * 4);
    for (let i = 0; i < 64 * 48; i++) rgba[i * 4 + 3] = i % 64 < 32 ? 0 : 255;
    const mask = await sharp(rgba, { raw: { width: 64, height: 48, channels: 4 } })
      .png()
      .toBuffer();
    const answer = await sdk(api).images.edit({
      model: 'sd1.5',
      image: await toFile(await picture(640, 480), 'photo.png', { type: 'image/png' }),
      mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
      prompt: 'a window in the wall',
      size: '512x512',
      response_format: 'b64_json',
    });
    expect(await decoded(Buffer.from(answer.data![0]!.b64_json!, 'base64'))).toMatchObject({
      width: 512,
      height: 512,
    });
    const task = await latestTask(api, '/sd/inpainting/v1');
    const ours = sharp(await fetched(String(task.request.mask_image)));
    expect(await ours.metadata()).toMatchObject({ width: 640, height: 480 });
    const { data, info } = await ours.raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => data[(y * info.width + x) * info.channels]!;
    expect([at(10, 240), at(630, 240)]).toEqual([255, 0]);
  });

  it('sends several images as image[], and is refused by name for a model that edits one', async () => {
    const image = await picture(64, 64);
    const refused = await sdk(gated.api)
      .images.edit({
        model: 'sdxl',
        image: [
          await toFile(image, 'a.png', { type: 'image/png' }),
          await toFile(image, 'b.png', { type: 'image/png' }),
        ],
        prompt: 'x',
      })
      .catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused).toMatchObject({
      param: 'image',
      message: '400 Model sdxl edits one image; 2 were sent.',
    });
    const notAnImage = await sdk(gated.api)
      .images.edit({ model: 'sdxl', image: await toFile(Buffer.from('plain text'), 'a.png'), prompt: 'x' })
      .catch((caught: unknown) => caught);
    expect(notAnImage).toMatchObject({ status: 400, param: 'image', code: 'invalid_image' });
  });
});

describe('a task that outlives its wait, or fails', () => {
  it('answers 504 naming the task, which goes on; the SDK is told not to queue it again', async () => {
    const { api, engine } = gated;
    const gate = uniqueName();
    const started = Date.now();
    const error = await sdk(api, api.alice.key, 2)
      .images.generate({ model: 'sdxl', prompt: `gate:${gate} a slow one` })
      .catch((caught: unknown) => caught);
    expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_MS);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    const { status, code, type, message } = error as InstanceType<typeof OpenAI.APIError>;
    expect({ status, code, type }).toEqual({ status: 504, code: 'task_still_running', type: 'timeout' });
    const task = await latestTask(api, '/sdxl/text2image/v1');
    expect(task.request.prompt).toBe(`gate:${gate} a slow one`);
    expect(message).toBe(
      `504 The image task ${task.id} did not end within 2 s; it goes on: poll GET /sdxl/text2image/v1/status/${task.id} with the same key for its images.`,
    );
    // One task: the SDK's retries (2 here) were held back by x-should-retry.
    const listed = await api.request('GET', '/tasks/v1?pipeline=%2Fsdxl%2Ftext2image%2Fv1&limit=100');
    const named = (listed.body as { tasks: { request: { prompt: string } }[] }).tasks.filter(
      (entry) => entry.request.prompt === `gate:${gate} a slow one`,
    );
    expect(named).toHaveLength(1);
    engine.gate(gate).open();
    expect(await api.settle(`/sdxl/text2image/v1/status/${task.id}`, api.alice.key)).toMatchObject({
      status: 'SUCCESS',
    });
  });
});

describe('an engine that fails a task', () => {
  it('answers 500 with the task and its error, not to be retried', async () => {
    const { api, engine } = gated;
    const run = engine.run;
    // The engine refuses prompts that ask it to: the task fails with that error.
    engine.run = async (job: EngineJob, ctx: RunContext) => {
      if (String(job.input.prompt).startsWith('fail:'))
        throw new EngineInputError('the engine was told to fail');
      return run.call(engine, job, ctx);
    };
    try {
      const prompt = `fail: ${uniqueName()}`;
      const error = await sdk(api, api.alice.key, 2)
        .images.generate({ model: 'sdxl', prompt })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      const task = await latestTask(api, '/sdxl/text2image/v1');
      expect(task.request.prompt).toBe(prompt);
      expect(error).toMatchObject({
        status: 500,
        code: 'task_failed',
        message: `500 The image task ${task.id} failed: the engine was told to fail`,
      });
      const listed = await api.request('GET', '/tasks/v1?pipeline=%2Fsdxl%2Ftext2image%2Fv1&limit=100');
      const tasks = (listed.body as { tasks: { request: { prompt: string } }[] }).tasks;
      expect(tasks.filter((entry) => entry.request.prompt === prompt)).toHaveLength(1);
    } finally {
      engine.run = run;
    }
  });
});
