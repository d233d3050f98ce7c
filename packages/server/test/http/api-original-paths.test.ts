import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

/**
 * The paths the original service's own clients send where this API's table writes another form:
 * its frontend uploads to /upload_images, its docs poll /load_model/status/{id}.
 */
describe('the paths of the original service’s frontend and docs', () => {
  let api: ApiHarness;
  let png: Buffer;
  beforeAll(async () => {
    api = await startApiHarness();
    png = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#208040' } })
      .png()
      .toBuffer();
  });
  afterAll(() => api.close());

  const form = () => {
    const body = new FormData();
    body.append('image_files', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'a.png');
    return body;
  };

  it.each(['/upload_images', '/upload_images/v1'])(
    '%s stores the upload and answers its URL',
    async (path) => {
      const uploaded = await api.request('POST', path, { body: form() });
      expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
      const urls = (uploaded.body as { image_urls: string[] }).image_urls;
      expect(urls).toHaveLength(1);
      const served = await fetch(urls[0]!);
      expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
    },
  );

  it.each(['/upload_images', '/upload_images/v1'])('%s refuses as the upload refuses', async (path) => {
    const anonymous = await api.request('POST', path, { key: null, body: form() });
    expect([anonymous.status, anonymous.body]).toEqual([
      401,
      { detail: 'Missing API key: send it in the API-Key header' },
    ]);
    const asJson = await api.request('POST', path, { json: { image_files: ['a.png'] } });
    expect([asJson.status, asJson.body]).toEqual([
      422,
      { detail: [{ loc: ['body', 'image_files'], msg: 'field required', type: 'value_error.missing' }] },
    ]);
  });

  it('answers GET /load_model/status/{id} as /load_model/v1/status/{id}: same body, same key', async () => {
    const submitted = await api.request('POST', '/load_model/v1', { json: api.example('/load_model/v1') });
    const { id } = submitted.body as { id: string };
    const pending = await api.request('GET', `/load_model/status/${id}`);
    expect(pending.status).toBe(200);
    expect(['PENDING', 'SUCCESS']).toContain((pending.body as { status: string }).status);

    const done = await api.settle(`/load_model/v1/status/${id}`, api.alice.key);
    expect(done).toMatchObject({ status: 'SUCCESS', model_id: expect.any(String) });
    const printed = await api.request('GET', `/load_model/status/${id}`);
    expect([printed.status, printed.body]).toEqual([200, done]);

    const anonymous = await api.request('GET', `/load_model/status/${id}`, { key: null });
    expect(anonymous.status).toBe(401);
    // Another account's task is not found there, as on the v1 path; a task of another path
    // answers there as on its own status path (in its own shape), as at every status path.
    const other = await api.request('GET', `/load_model/status/${id}`, { key: api.bob.key });
    expect([other.status, other.body]).toEqual([404, { detail: 'Task not found' }]);
    const image = await api.request('POST', '/sd/text2image/v1', {
      json: { prompt: 'a', negative_prompt: '' },
    });
    const imageId = (image.body as { id: string }).id;
    const imageDone = await api.settle(`/sd/text2image/v1/status/${imageId}`, api.alice.key);
    const imageTask = await api.request('GET', `/load_model/status/${imageId}`);
    expect([imageTask.status, imageTask.body]).toEqual([200, imageDone]);
  });
});
