import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

const T2I = '/sd/text2image/v1';
const I2I = '/sd/image2image/v1';

describe('bad input over HTTP answers a clear error and leaves no half-made task', () => {
  let api: ApiHarness;
  let tasksBefore: number;
  const countTasks = async () =>
    Number((await api.db.pool.query('SELECT count(*) FROM tasks')).rows[0].count);

  beforeAll(async () => {
    api = await startApiHarness();
  });
  beforeEach(async () => {
    tasksBefore = await countTasks();
  });
  afterAll(() => api.close());

  async function expectNoNewTask() {
    expect(await countTasks()).toBe(tasksBefore);
  }

  it('answers invalid JSON with 422 and the decode position, as FastAPI does', async () => {
    const response = await api.request('POST', T2I, {
      body: '{"prompt": "fox", "negative_prompt": }',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(422);
    const [entry] = (response.body as { detail: { loc: unknown[]; type: string; msg: string }[] }).detail;
    expect(entry).toMatchObject({ loc: ['body', 37], type: 'value_error.jsondecode' });
    expect(entry!.msg).toContain('Expecting value');
    await expectNoNewTask();
  });

  it('answers a broken body nested thousands deep with 400, as FastAPI does when Python gives up', async () => {
    for (const body of ['['.repeat(50_000), `{"prompt": ${'['.repeat(5000)}]]}`]) {
      const response = await api.request('POST', T2I, {
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ detail: 'There was an error parsing the body' });
    }
    await expectNoNewTask();
  });

  it('answers an empty body with 422 field required', async () => {
    const response = await api.request('POST', T2I, {
      body: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [{ loc: ['body'], msg: 'field required', type: 'value_error.missing' }],
    });
    await expectNoNewTask();
  });

  it('answers a 50 MB body with 413 and a JSON detail, not a 500', async () => {
    const huge = JSON.stringify({ prompt: 'x'.repeat(50 * 1024 * 1024), negative_prompt: '' });
    const response = await api.request('POST', T2I, {
      body: huge,
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ detail: 'Request body is too large: the limit is 1 MiB' });
    await expectNoNewTask();
  });

  it.each([
    ['no Content-Type', T2I, undefined],
    ['text/plain', T2I, 'text/plain'],
    ['a +json type', T2I, 'application/vnd.api+json'],
    ['an unparsable Content-Type', T2I, 'garbage'],
    ['multipart/form-data on a JSON path', T2I, 'multipart/form-data; boundary=XyZ'],
    ['a URL-encoded upload', '/upload_images/v1', 'application/x-www-form-urlencoded'],
  ])('answers a body over 1 MiB with %s with 413 too, whatever reads it', async (_name, path, type) => {
    const response = await api.request('POST', path, {
      body: Buffer.alloc(1024 * 1024 + 1, 'a'),
      headers: type === undefined ? {} : { 'content-type': type },
    });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ detail: 'Request body is too large: the limit is 1 MiB' });
    await expectNoNewTask();
  });

  it('answers wrong types and out-of-range values with 422 naming each field', async () => {
    const response = await api.request('POST', T2I, {
      json: { prompt: [42], negative_prompt: '', samples: 5, width: 'wide' },
    });
    expect(response.status).toBe(422);
    const locs = (response.body as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.prompt', 'body.samples', 'body.width']));
    await expectNoNewTask();
  });

  it('answers a body that is not an object with 422', async () => {
    const response = await api.request('POST', T2I, { json: ['prompt'] });
    expect(response.status).toBe(422);
    await expectNoNewTask();
  });

  it('answers a malformed or non-http image URL with 422 at submission', async () => {
    for (const init_image of ['not a url', 'ftp://example.com/a.png', 'file:///etc/passwd']) {
      const response = await api.request('POST', I2I, {
        json: { prompt: 'p', negative_prompt: '', init_image },
      });
      expect(response.status, init_image).toBe(422);
      const detail = (response.body as { detail: { loc: unknown[] }[] }).detail;
      expect(detail[0]!.loc).toEqual(['body', 'init_image']);
    }
    await expectNoNewTask();
  });

  it('answers a body sent as text/plain as FastAPI does: its bytes are not a dict (422)', async () => {
    const response = await api.request('POST', T2I, {
      body: '{"prompt":"p","negative_prompt":""}',
      headers: { 'content-type': 'text/plain' },
    });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [{ loc: ['body'], msg: 'value is not a valid dict', type: 'type_error.dict' }],
    });
    await expectNoNewTask();
  });

  it('answers server_id from a non-enterprise plan with 403 and creates no task', async () => {
    const response = await api.request('POST', T2I, {
      json: { prompt: 'p', negative_prompt: '', server_id: 'any' },
    });
    expect(response.status).toBe(403);
    expect((response.body as { detail: string }).detail).toContain('enterprise plan');
    await expectNoNewTask();
  });

  it('answers a load_model without model_extension for a model_url with 422 and registers no model', async () => {
    const models = async () => Number((await api.db.pool.query('SELECT count(*) FROM models')).rows[0].count);
    const before = await models();
    const response = await api.request('POST', '/load_model/v1', {
      json: {
        model_name: 'm',
        pretrained_model_path: null,
        model_url: 'https://models.example.com/m.safetensors',
        base_model: 'sdxl',
        model_type: 'lora',
        description: 'd',
        sample_images: [],
        visibility: 'private',
      },
    });
    expect(response.status).toBe(422);
    expect(JSON.stringify(response.body)).toContain('model_extension');
    expect(await models()).toBe(before);
    await expectNoNewTask();
  });

  it.each([
    ['a private address', () => 'http://10.0.0.5/a.png', /init_image: .*10\.0\.0\.5/],
    ['a non-image', (api: ApiHarness) => `${api.imagesUrl}/not-image.txt`, /init_image: .*not a PNG/],
    ['a truncated PNG', (api: ApiHarness) => `${api.imagesUrl}/truncated.png`, /init_image: .*truncated/],
    ['a missing file', (api: ApiHarness) => `${api.imagesUrl}/gone.png`, /init_image: .*404/],
  ])('fails the task with an error naming the field for %s', async (_what, url, error) => {
    const submitted = await api.request('POST', I2I, {
      json: { prompt: 'p', negative_prompt: '', init_image: url(api) },
    });
    expect(submitted.status).toBe(200);
    const done = await api.settle(`${I2I}/status/${(submitted.body as { id: string }).id}`, api.alice.key);
    expect(done.status).toBe('FAILURE');
    expect(String(done.error)).toMatch(error);
  });

  it('answers an upload that is not an image with 422 and stores nothing', async () => {
    const uploads = async () =>
      Number((await api.db.pool.query('SELECT count(*) FROM uploads')).rows[0].count);
    const before = await uploads();
    const form = new FormData();
    form.append('image_files', new Blob(['hello, not a picture'], { type: 'image/png' }), 'fake.png');
    const response = await api.request('POST', '/upload_images/v1', { body: form });
    expect(response.status).toBe(422);
    const [entry] = (response.body as { detail: { loc: unknown[]; msg: string }[] }).detail;
    expect(entry!.loc).toEqual(['body', 'image_files', 0]);
    expect(entry!.msg).toContain('not a PNG, JPEG, WebP or GIF');
    expect(await uploads()).toBe(before);
  });

  it('answers an upload without image_files parts with 422 field required', async () => {
    const form = new FormData();
    form.append('other', 'x');
    const response = await api.request('POST', '/upload_images/v1', { body: form });
    expect(response.status).toBe(422);
    expect(JSON.stringify(response.body)).toContain('image_files');
    expect(response.body).toEqual({
      detail: [{ loc: ['body', 'image_files'], msg: 'field required', type: 'value_error.missing' }],
    });
  });

  it.each([
    [
      '0',
      {
        loc: ['query', 'limit'],
        msg: 'ensure this value is greater than or equal to 1',
        type: 'value_error.number.not_ge',
        ctx: { limit_value: 1 },
      },
    ],
    [
      '101',
      {
        loc: ['query', 'limit'],
        msg: 'ensure this value is less than or equal to 100',
        type: 'value_error.number.not_le',
        ctx: { limit_value: 100 },
      },
    ],
    ['ten', { loc: ['query', 'limit'], msg: 'value is not a valid integer', type: 'type_error.integer' }],
    ['2.5', { loc: ['query', 'limit'], msg: 'value is not a valid integer', type: 'type_error.integer' }],
  ])(
    'answers GET /images/v1?limit=%s with the 422 pydantic writes for Query(ge=1, le=100)',
    async (limit, entry) => {
      const response = await api.request('GET', `/images/v1?limit=${limit}`);
      expect(response.status).toBe(422);
      expect(response.body).toEqual({ detail: [entry] });
    },
  );

  it('reads GET /images/v1?limit= at its bounds, and without it', async () => {
    for (const query of ['?limit=1', '?limit=100', '', '?before=not-an-image-id']) {
      const response = await api.request('GET', `/images/v1${query}`);
      expect(response.status, query).toBe(200);
    }
  });

  it('accepts /sync_model/v1 without server_id, as the contract makes it optional', async () => {
    const load = await api.request('POST', '/load_model/v1', {
      json: {
        model_name: 'm',
        pretrained_model_path: 'org/model',
        model_url: null,
        base_model: 'sdxl',
        model_type: 'lora',
        description: 'd',
        sample_images: [],
        visibility: 'private',
      },
    });
    const loaded = await api.settle(
      `/load_model/v1/status/${(load.body as { id: string }).id}`,
      api.alice.key,
    );
    const response = await api.request('POST', '/sync_model/v1', { json: { model_id: loaded.model_id } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ status: 'PENDING' });
  });

  it("answers each failing upload part with the image inspector's reason at its index, and stores nothing", async () => {
    const uploads = async () =>
      Number((await api.db.pool.query('SELECT count(*) FROM uploads')).rows[0].count);
    const before = await uploads();
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#123456' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('image_files', new Blob([png], { type: 'image/png' }), 'good.png');
    form.append(
      'image_files',
      new Blob([png.subarray(0, png.length - 20)], { type: 'image/png' }),
      'cut.png',
    );
    form.append('image_files', new Blob([]), 'empty.png');
    const response = await api.request('POST', '/upload_images/v1', { body: form });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [
        {
          loc: ['body', 'image_files', 1],
          msg: 'the image data is truncated or corrupt',
          type: 'value_error.image',
        },
        { loc: ['body', 'image_files', 2], msg: 'the image is empty (0 bytes)', type: 'value_error.image' },
      ],
    });
    expect(await uploads()).toBe(before);
  });

  it('answers a multipart body the parser cannot read with 400, as FastAPI does, and stores nothing', async () => {
    const uploads = async () =>
      Number((await api.db.pool.query('SELECT count(*) FROM uploads')).rows[0].count);
    const before = await uploads();
    const part = '--b1\r\nContent-Disposition: form-data; name="image_files"; filename="a.png"\r\n\r\nxyz';
    const cases: [string, string, string][] = [
      ['multipart/form-data', '--b1--\r\n', 'Missing boundary in multipart.'],
      [
        'multipart/form-data; boundary=b1',
        '{"image_files": ["a.png"]}',
        'There was an error parsing the body',
      ],
      ['multipart/form-data; boundary=b1', 'hello world', 'There was an error parsing the body'],
      [`multipart/form-data; boundary=${'b'.repeat(300)}`, part, 'There was an error parsing the body'],
    ];
    for (const [type, body, detail] of cases) {
      const response = await api.request('POST', '/upload_images/v1', {
        body,
        headers: { 'content-type': type },
      });
      expect([response.status, response.body], type).toEqual([400, { detail }]);
    }
    expect(await uploads()).toBe(before);
  });

  it('reads a multipart body that ends early as python-multipart does for FastAPI: finished parts count', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } })
      .png()
      .toBuffer();
    const part = Buffer.concat([
      Buffer.from('--b1\r\nContent-Disposition: form-data; name="image_files"; filename="a.png"\r\n'),
      Buffer.from('Content-Type: image/png\r\n\r\n'),
      png,
      Buffer.from('\r\n'),
    ]);
    const missing = {
      detail: [{ loc: ['body', 'image_files'], msg: 'field required', type: 'value_error.missing' }],
    };
    // What FastAPI 0.92 with python-multipart 0.0.6 answers for each body (the image count of a 200).
    const cases: [string, Buffer, number, unknown][] = [
      ['empty', Buffer.alloc(0), 422, missing],
      ['one part, no closing boundary', part, 422, missing],
      ['one part cut mid-data', part.subarray(0, part.length - 10), 422, missing],
      ['one part, then one cut short', Buffer.concat([part, part.subarray(0, 50)]), 200, 1],
      ['two parts, no closing boundary', Buffer.concat([part, part]), 200, 1],
    ];
    for (const [what, body, status, answer] of cases) {
      const response = await api.request('POST', '/upload_images/v1', {
        body,
        headers: { 'content-type': 'multipart/form-data; boundary=b1' },
      });
      expect(response.status, what).toBe(status);
      if (status === 200)
        expect((response.body as { image_urls: string[] }).image_urls, what).toHaveLength(answer as number);
      else expect(response.body, what).toEqual(answer);
    }
  });

  it('reads a path whose escapes are not UTF-8 as FastAPI does (U+FFFD per bad byte), answering JSON', async () => {
    for (const [path, detail] of [
      ['/models/v1/%ff', 'Model not found'],
      ['/models/v1/%ED%A0%80', 'Model not found'],
      ['/images/v1/a%', 'Image not found'],
      [`${T2I}/status/%ff`, 'Task not found'],
      ['/files/%ff%fe', 'File not found'],
    ]) {
      const response = await api.request('GET', path!);
      expect([response.status, response.body], path).toEqual([404, { detail }]);
    }
    const submitted = await api.request('POST', T2I, {
      json: { prompt: 'fox', negative_prompt: '', batch_id: 'b\ufffd\ufffd\ufffd' },
    });
    expect(submitted.status).toBe(200);
    const batch = await api.request('GET', '/batches/v1/b%ED%A0%80');
    expect(batch.status).toBe(200);
    expect(batch.body).toMatchObject({ batch_id: 'b\ufffd\ufffd\ufffd' });
  });

  it('answers an upload sent as JSON as FastAPI does: an empty form, so image_files is missing (422)', async () => {
    const response = await api.request('POST', '/upload_images/v1', { json: { image_files: ['a.png'] } });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [{ loc: ['body', 'image_files'], msg: 'field required', type: 'value_error.missing' }],
    });
  });

  it('answers an upload part above the input image cap with 413, and more parts than allowed with 413', async () => {
    const big = new FormData();
    big.append('image_files', new Blob([new Uint8Array(21 * 1024 * 1024)], { type: 'image/png' }), 'big.png');
    const tooBig = await api.request('POST', '/upload_images/v1', { body: big });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toEqual({
      detail: 'An uploaded file is too large: each image may be at most 20 MiB',
    });

    const many = new FormData();
    for (let n = 0; n < 17; n++) many.append('image_files', new Blob([new Uint8Array(8)]), `${n}.png`);
    const tooMany = await api.request('POST', '/upload_images/v1', { body: many });
    expect(tooMany.status).toBe(413);
    expect(tooMany.body).toEqual({ detail: 'Too many parts in the upload' });
  });
});
