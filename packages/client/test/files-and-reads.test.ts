import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createClient, type ImagegenClient } from '../src/index.ts';
import { saveOutputs, uploadFiles } from '../src/node.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

/** Uploads, downloads and the reads of the owner's records, against the real API. */

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47];

let api: TestApi;
let client: ImagegenClient;
let dir: string;

beforeAll(async () => {
  api = await startTestApi();
  client = createClient({ apiKey: api.key, baseUrl: api.url });
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-client-'));
});

afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('files', () => {
  it('uploads local images and uses the answered URLs as a request input', async () => {
    const file = path.join(dir, 'photo.png');
    await writeFile(file, api.photo);
    const [url] = await uploadFiles(client, [file]);
    expect(url?.startsWith(`${api.url}/files/`)).toBe(true);
    const result = await client.run('/sd/image2image/v1', {
      prompt: 'a watercolour',
      negative_prompt: '',
      init_image: url!,
      width: 64,
      height: 48,
    });
    expect(result.download_urls).toHaveLength(1);
  });

  it('uploads in batches of at most 16 images, keeping their order', async () => {
    const files = await Promise.all(
      Array.from({ length: 18 }, async (_, n) => ({
        name: `p${n}.png`,
        data: await sharp({ create: { width: n + 1, height: 1, channels: 3, background: '#000' } })
          .png()
          .toBuffer(),
      })),
    );
    const urls = await client.uploadImages(files);
    expect(urls).toHaveLength(18);
    expect(new Set(urls.map((url) => url.split('/').slice(-2, -1)[0])).size).toBe(2);
    const widths = await Promise.all(
      urls.map(async (url) => (await sharp(await client.download(url)).metadata()).width),
    );
    expect(widths).toEqual(files.map((_, n) => n + 1));
  });

  it('downloads outputs into a folder, and as bytes', async () => {
    const result = await client.run('/sd/text2image/v1', {
      prompt: 'two boats',
      negative_prompt: '',
      samples: 2,
      width: 64,
      height: 64,
    });
    const urls = result.download_urls ?? [];
    const files = await saveOutputs(client, urls, path.join(dir, 'out'), { prefix: 'boats-' });
    expect(files.map((file) => path.basename(file))).toEqual(['boats-0.png', 'boats-1.png']);
    for (const file of files) expect([...(await readFile(file)).subarray(0, 4)]).toEqual(PNG_SIGNATURE);
    const bytes = await client.download(urls[0]!);
    expect(Buffer.from(bytes).equals(await readFile(files[0]!))).toBe(true);
    const missing = await client.download(`${api.url}/files/nothing/here.png`).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect((missing as ApiError).status).toBe(404);
  });
});

describe('reads', () => {
  it('lists tasks page by page, filtered', async () => {
    const batch = `reads-${Date.now()}`;
    for (let n = 0; n < 3; n++) {
      await client.submit('/sd/text2image/v1', { prompt: `p${n}`, negative_prompt: '', batch_id: batch });
    }
    const page = await client.tasks({ batch_id: batch, limit: 2 });
    expect(page.tasks).toHaveLength(2);
    expect(page.next_cursor).not.toBeNull();
    const all = [];
    for await (const task of client.allTasks({ batch_id: batch, limit: 2 })) all.push(task);
    expect(all).toHaveLength(3);
    expect(new Set(all.map((task) => task.pipeline))).toEqual(new Set(['/sd/text2image/v1']));
    expect(await client.get('/batches/v1/{batch_id}', { params: { batch_id: batch } })).toMatchObject({
      batch_id: batch,
    });
  });

  it('reads models and images, and answers an unknown id with a 404 ApiError', async () => {
    expect(await client.models()).toEqual([]);
    const images = await client.get('/images/v1', { query: { limit: 1 } });
    expect(images).toHaveLength(1);
    const image = await client.get('/images/v1/{image_id}', { params: { image_id: images[0]!.image_id } });
    expect(image.download_url).toBe(images[0]!.download_url);
    const error = await client
      .get('/models/v1/{model_id}', { params: { model_id: 'no-such-model' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(404);
    // An empty id names no record: it is refused before any request.
    expect(() => client.get('/models/v1/{model_id}', { params: { model_id: '' } })).toThrow(
      new TypeError('/models/v1/{model_id}: the parameter model_id is empty'),
    );
  });

  it('deletes a model, and answers a second delete with a 404 ApiError', async () => {
    const loaded = await client.run('/load_model/v1', {
      model_name: 'to delete',
      pretrained_model_path: null,
      model_url: null,
      base_model: 'sd1.5',
      model_type: 'lora',
      description: '',
      sample_images: [],
      visibility: 'private',
    });
    const modelId = loaded.model_id!;
    expect((await client.models()).map((model) => model.model_id)).toContain(modelId);
    expect(await client.deleteModel(modelId)).toEqual({ model_id: modelId, deleted: true });
    expect((await client.models()).map((model) => model.model_id)).not.toContain(modelId);
    const again = await client.deleteModel(modelId).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ApiError);
    expect((again as ApiError).status).toBe(404);
  });
});
