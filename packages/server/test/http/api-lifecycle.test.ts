import { endpoints } from '@imagegen/contract';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

/** The contract's example body, with its example image URLs pointing at the loopback image server. */
function exampleFor(path: string, imagesUrl: string): Record<string, unknown> {
  const example = endpoints.find((e) => e.path === path)?.example;
  if (!example) throw new Error(`the contract has no example for ${path}`);
  return JSON.parse(
    JSON.stringify(example).replace(
      /https:\/\/images\.example\.com\/[A-Za-z0-9_-]+\.png/g,
      `${imagesUrl}/photo.png`,
    ),
  );
}

const generations = endpoints.filter((e) => e.kind === 'generation');

describe('the full lifecycle of every endpoint over HTTP', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness();
  });
  afterAll(() => api.close());

  it.each(generations.map((e) => [e.path]))(
    '%s: submit answers PENDING with an id; status ends in SUCCESS',
    async (path) => {
      const body = exampleFor(path, api.imagesUrl);
      if (path === '/sync_model/v1') return; // covered below: it needs a model and an enterprise server
      const submitted = await api.request('POST', path, { json: body });
      expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
      const accepted = submitted.body as { status: string; id: string };
      expect(accepted.status).toBe('PENDING');
      expect(accepted.id).toMatch(/^[0-9a-f-]{36}$/);
      const done = await api.settle(`${path}/status/${accepted.id}`, api.alice.key);
      expect(done.status, JSON.stringify(done)).toBe('SUCCESS');
      if (path === '/image2prompt/v1') {
        expect(done.prompt).toBe('a plain test picture');
        return;
      }
      const urls = done.download_urls as string[];
      expect(urls.length).toBeGreaterThan(0);
      const file = await fetch(urls[0]!);
      expect(file.status).toBe(200);
      const meta = await sharp(Buffer.from(await file.arrayBuffer())).metadata();
      expect(meta.format).toBe('png');
      if (typeof body.width === 'number') expect(meta.width).toBe(body.width);
    },
  );

  it('returns queued_image_urls at submission and in the pending status; they serve the image once done', async () => {
    const submitted = await api.request('POST', '/sd/text2image/v1', {
      json: {
        prompt: 'fox',
        negative_prompt: '',
        samples: 2,
        width: 96,
        height: 64,
        queued_image_urls: true,
        file_prefix: 'fox-',
      },
    });
    const accepted = submitted.body as { id: string; download_urls: string[] };
    expect(accepted.download_urls).toHaveLength(2);
    expect(accepted.download_urls[0]).toMatch(new RegExp(`^${api.url}/files/[A-Za-z0-9_-]{22}/fox-`));
    const done = await api.settle(`/sd/text2image/v1/status/${accepted.id}`, api.alice.key);
    expect(done.download_urls).toEqual(accepted.download_urls);
    const file = await fetch(accepted.download_urls[1]!);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
  });

  it('answers the image inline when base64 is true, where the schema has base64', async () => {
    const withBase64 = generations.find(
      (e) => 'base64' in ((e.request as { properties?: object }).properties ?? {}),
    );
    const path = withBase64!.path;
    const submitted = await api.request('POST', path, {
      json: { ...exampleFor(path, api.imagesUrl), base64: true },
    });
    const done = await api.settle(`${path}/status/${(submitted.body as { id: string }).id}`, api.alice.key);
    expect(typeof done.image, JSON.stringify(done)).toBe('string');
    const image = Buffer.from(String(done.image), 'base64');
    expect((await sharp(image).metadata()).format).toBe('png');
  });

  it('load_model registers a model that completes, is listed as UserModelInfo and read as UserModel', async () => {
    const body = exampleFor('/load_model/v1', api.imagesUrl);
    delete body.server_id;
    const submitted = await api.request('POST', '/load_model/v1', { json: body });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const id = (submitted.body as { id: string }).id;
    const done = await api.settle(`/load_model/v1/status/${id}`, api.alice.key);
    expect(done.status).toBe('SUCCESS');
    const modelId = done.model_id as string;
    expect(modelId).toMatch(/^[0-9a-f]{32}$/);

    const list = (await api.request('GET', '/models/v1')).body as { model_id: string }[];
    const info = list.find((m) => m.model_id === modelId);
    expect(info).toMatchObject({ model_name: body.model_name, base_model: body.base_model, verified: false });
    expect(Object.keys(info!).sort()).toEqual(
      [
        'base_model',
        'model_id',
        'model_name',
        'model_type',
        'sample_images',
        'tags',
        'verified',
        'visibility',
      ].sort(),
    );
    const model = await api.request('GET', `/models/v1/${modelId}`);
    expect(model.status).toBe(200);
    expect(model.body).toMatchObject({ user_id: api.alice.ownerId, model_id: modelId, trained_model: false });
  });

  it('train_model answers {id, status: queued}, then completed with model_id and a duration', async () => {
    const body = exampleFor('/train_model/v1', api.imagesUrl);
    const submitted = await api.request('POST', '/train_model/v1', { json: body });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const accepted = submitted.body as { id: string; status: string };
    expect(accepted.status).toBe('queued');
    const done = await api.settle(`/train_model/v1/status/${accepted.id}`, api.alice.key);
    expect(done.status).toBe('completed');
    expect(typeof done.training_duration_seconds).toBe('number');
    const model = await api.request('GET', `/models/v1/${done.model_id}`);
    expect(model.body).toMatchObject({ trained_model: true, model_type: 'lora' });
  });

  it('sync_model copies an enterprise owner model to its server and completes', async () => {
    const load = exampleFor('/load_model/v1', api.imagesUrl);
    delete load.server_id;
    const loaded = await api.request('POST', '/load_model/v1', { key: api.enterprise.key, json: load });
    const { model_id } = await api.settle(
      `/load_model/v1/status/${(loaded.body as { id: string }).id}`,
      api.enterprise.key,
    );
    const synced = await api.request('POST', '/sync_model/v1', {
      key: api.enterprise.key,
      json: { model_id, server_id: 'gpu-1' },
    });
    expect(synced.status, JSON.stringify(synced.body)).toBe(200);
    const done = await api.settle(
      `/sync_model/v1/status/${(synced.body as { id: string }).id}`,
      api.enterprise.key,
    );
    expect(done.status).toBe('SUCCESS');
  });

  it('uploads images over multipart and the answered URLs work as inputs', async () => {
    const png = await sharp({ create: { width: 50, height: 40, channels: 3, background: '#ff8800' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('image_files', new Blob([png], { type: 'image/png' }), 'a.png');
    form.append('image_files', new Blob([png], { type: 'image/png' }), 'b.png');
    const uploaded = await api.request('POST', '/upload_images/v1', { body: form });
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    const urls = (uploaded.body as { image_urls: string[] }).image_urls;
    expect(urls).toHaveLength(2);
    const served = await fetch(urls[0]!);
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);

    const body = { ...exampleFor('/sd/image2image/v1', api.imagesUrl), init_image: urls[0] };
    const submitted = await api.request('POST', '/sd/image2image/v1', { json: body });
    const done = await api.settle(
      `/sd/image2image/v1/status/${(submitted.body as { id: string }).id}`,
      api.alice.key,
    );
    expect(done.status, JSON.stringify(done)).toBe('SUCCESS');
  });

  it("lists the owner's images as UserImage and reads one as ImageInfo", async () => {
    const list = await api.request('GET', '/images/v1?limit=3');
    expect(list.status).toBe(200);
    const images = list.body as { image_id: string; download_url: string }[];
    expect(images).toHaveLength(3);
    const page2 = (await api.request('GET', `/images/v1?limit=3&before=${images[2]!.image_id}`))
      .body as unknown[];
    expect(page2.length).toBeGreaterThan(0);
    expect(page2).not.toContainEqual(images[2]);
    const one = await api.request('GET', `/images/v1/${images[0]!.image_id}`);
    expect(one.body).toMatchObject({
      image_id: images[0]!.image_id,
      user_id: api.alice.ownerId,
      download_url: images[0]!.download_url,
    });
    // The request that made it, as JSON text (the original's frontend parses it for the prompt).
    expect(JSON.parse((one.body as { json: string }).json)).toMatchObject({ prompt: expect.any(String) });
  });

  it('lists the tasks of a batch with their statuses', async () => {
    const ids: string[] = [];
    for (const prompt of ['one', 'two']) {
      const r = await api.request('POST', '/sd/text2image/v1', {
        json: { prompt, negative_prompt: '', width: 16, height: 16, batch_id: 'nightly-7' },
      });
      ids.push((r.body as { id: string }).id);
    }
    for (const id of ids) await api.settle(`/sd/text2image/v1/status/${id}`, api.alice.key);
    const batch = await api.request('GET', '/batches/v1/nightly-7');
    expect(batch.body).toMatchObject({
      batch_id: 'nightly-7',
      tasks: ids.map((id) => ({ id, path: '/sd/text2image/v1', status: 'SUCCESS' })),
    });
  });

  it("answers the owner's subscription and webhook secret", async () => {
    const sub = await api.request('GET', '/subscription/v1');
    expect(sub.body).toMatchObject({ user_id: api.alice.ownerId, plan: 'STANDARD', pod_status: 'unknown' });
    const secret = await api.request('GET', '/webhook_secret/v1');
    expect((secret.body as { secret: string }).secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
  });
});
