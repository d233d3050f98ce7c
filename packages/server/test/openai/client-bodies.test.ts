import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

/**
 * The requests Open WebUI and LibreChat send to an OpenAI-compatible image server, replayed as they
 * send them (header, body, form part names and values as their sources write them), against the
 * real API and a test engine that draws plain PNGs of the requested size; and what each then reads
 * of the answer.
 *
 * - Open WebUI, `backend/open_webui/routers/images.py` (`image_generations`, `image_edits`): JSON
 *   `{model, prompt, n, size, response_format: "b64_json"}` (no `response_format` for a model
 *   matching `^gpt-image`); edits as a form whose values are `str()`s, one file `image` or several
 *   `image[]`; it reads `data[].url` (fetched with the same Authorization) or `data[].b64_json`.
 * - LibreChat, `api/app/clients/tools/structured/DALLE3.js`: `{model: "dall-e-3", quality, style,
 *   size, prompt, n: 1}`, reads `data[0].url` and downloads it, naming the file by the link's
 *   extension; `OpenAIImageTools.js`: `{model: "gpt-image-1", prompt, n, background: "auto",
 *   output_format: "png", quality: "auto", size: "auto"}` and an edit form of `model`, `prompt`,
 *   `quality`, `size` and `image[]` files, reading `data[0].b64_json`; `DALLE.js` (DALL·E 2):
 *   `{prompt, n: 1, size: "512x512"}`, no model.
 */

let api: ApiHarness;
let photo: Buffer;

beforeAll(async () => {
  api = await startApiHarness();
  photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#806040' } })
    .png()
    .toBuffer();
});

afterAll(async () => {
  await api?.close();
});

const bearer = () => ({ Authorization: `Bearer ${api.alice.key}` });

/** A POST as the clients send it: a JSON body, or a form (an edit). */
async function post(path: string, body: object | FormData) {
  const json = !(body instanceof FormData);
  const response = await fetch(`${api.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(), ...(json ? { 'Content-Type': 'application/json' } : {}) },
    body: json ? JSON.stringify(body) : body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function size(bytes: Buffer) {
  const { format, width, height } = await sharp(bytes).metadata();
  return { format, width, height };
}

/** Each image of an answer, as the client reads it: the link fetched (as it fetches it), or the base64. */
async function images(answer: Record<string, unknown>, fetchHeaders: Record<string, string> = {}) {
  const data = answer.data as { url?: string; b64_json?: string }[];
  return Promise.all(
    data.map(async (image) => {
      if (image.b64_json) return size(Buffer.from(image.b64_json, 'base64'));
      const response = await fetch(image.url!, { headers: fetchHeaders });
      expect(response.headers.get('content-type')).toMatch(/^image\//);
      return size(Buffer.from(await response.arrayBuffer()));
    }),
  );
}

describe("Open WebUI's requests", () => {
  it('generates with its default image model and size, asking for base64', async () => {
    const answer = await post('/v1/images/generations', {
      model: 'dall-e-2',
      prompt: 'a cat wearing a hat',
      n: 1,
      size: '512x512',
      response_format: 'b64_json',
    });
    expect(answer.status).toBe(200);
    expect(typeof answer.body.created).toBe('number');
    // dall-e-2 is the default table's Flux Schnell: its square size.
    expect(await images(answer.body)).toEqual([{ format: 'png', width: 1024, height: 1024 }]);
  });

  it('generates with a GPT image model, sending no response_format, and reads either answer', async () => {
    const answer = await post('/v1/images/generations', {
      model: 'gpt-image-1',
      prompt: 'a cat wearing a hat',
      n: 1,
      size: '1024x1536',
    });
    expect(answer.status).toBe(200);
    expect(await images(answer.body, bearer())).toEqual([{ format: 'png', width: 832, height: 1216 }]);
  });

  it('edits one image sent as `image`, its fields as text', async () => {
    const form = new FormData();
    for (const [name, value] of Object.entries({
      model: 'gpt-image-1',
      prompt: 'make it night',
      n: '1',
      size: '1024x1024',
      response_format: 'b64_json',
    })) {
      form.append(name, value);
    }
    form.append('image', new Blob([new Uint8Array(photo)], { type: 'image/png' }), '3b0e6c1e.png');
    const answer = await post('/v1/images/edits', form);
    expect(answer.status).toBe(200);
    expect(await images(answer.body)).toEqual([{ format: 'png', width: 1024, height: 1024 }]);
  });

  it('sends several images as `image[]`: refused by name where the model edits one', async () => {
    const form = new FormData();
    form.append('model', 'gpt-image-1');
    form.append('prompt', 'combine them');
    for (const name of ['a.png', 'b.png']) {
      form.append('image[]', new Blob([new Uint8Array(photo)], { type: 'image/png' }), name);
    }
    const answer = await post('/v1/images/edits', form);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: {
        message: 'Model flux-schnell edits one image; 2 were sent.',
        type: 'invalid_request_error',
        param: 'image',
        code: 'unsupported_value',
      },
    });
  });
});

describe("LibreChat's requests", () => {
  it('DALL·E 3: reads the link and downloads a PNG named by its extension', async () => {
    const answer = await post('/v1/images/generations', {
      model: 'dall-e-3',
      quality: 'standard',
      style: 'vivid',
      size: '1024x1024',
      prompt: 'a watercolor of a harbour',
      n: 1,
    });
    expect(answer.status).toBe(200);
    const [image] = answer.body.data as { url: string }[];
    expect(new URL(image!.url).pathname).toMatch(/\.png$/);
    expect(await images(answer.body)).toEqual([{ format: 'png', width: 1024, height: 1024 }]);
  });

  it('DALL·E 2: no model, a 512 × 512 size, read as a link', async () => {
    const answer = await post('/v1/images/generations', {
      prompt: 'a small boat',
      n: 1,
      size: '512x512',
    });
    expect(answer.status).toBe(200);
    expect((answer.body.data as { url?: string }[])[0]!.url).toBeDefined();
  });

  it('gpt-image-1: generates with its tool defaults and reads the base64', async () => {
    const answer = await post('/v1/images/generations', {
      model: 'gpt-image-1',
      prompt: 'a lantern in the fog',
      n: 1,
      background: 'auto',
      output_format: 'png',
      quality: 'auto',
      size: 'auto',
    });
    expect(answer.status).toBe(200);
    expect(await images(answer.body)).toEqual([{ format: 'png', width: 1024, height: 1024 }]);
    expect(answer.body).toMatchObject({ output_format: 'png', quality: 'auto', size: '1024x1024' });
  });

  it('gpt-image-1: edits one image sent as `image[]` and reads the base64', async () => {
    const form = new FormData();
    form.append('model', 'gpt-image-1');
    form.append('prompt', 'add a red scarf');
    form.append('quality', 'auto');
    form.append('size', 'auto');
    form.append('image[]', new Blob([new Uint8Array(photo)], { type: 'image/png' }), 'upload.png');
    const answer = await post('/v1/images/edits', form);
    expect(answer.status).toBe(200);
    // `auto`: the family size nearest the image's 4:3.
    expect(await images(answer.body)).toEqual([{ format: 'png', width: 1152, height: 896 }]);
  });
});
