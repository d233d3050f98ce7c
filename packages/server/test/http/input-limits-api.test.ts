import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

/**
 * TASK_MAX_INPUT_IMAGES at submission: a request naming more image links than a task may have is
 * answered 422 at the field whose links go past the limit, and nothing is queued (default 64).
 */
let api: ApiHarness;

beforeAll(async () => {
  api = await startApiHarness({ withWorkers: false });
});
afterAll(() => api.close());

const links = (count: number) => Array.from({ length: count }, (_, n) => `${api.imagesUrl}/photo.png?${n}`);
const controlnet = (body: Record<string, unknown>) =>
  api.request('POST', '/sd/controlnet/v1', { json: { ...api.example('/sd/controlnet/v1'), ...body } });

async function queued(): Promise<number> {
  const { rows } = await api.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM tasks');
  return rows[0]!.n;
}

describe('the image links of a request', () => {
  it('answers 422 at the field for more links than a task may have, and queues nothing', async () => {
    const before = await queued();
    const response = await controlnet({ init_images: links(65) });
    expect([response.status, response.body]).toEqual([
      422,
      {
        detail: [
          {
            loc: ['body', 'init_images'],
            msg: 'the request names 65 input images, more than the 64 a task may have (TASK_MAX_INPUT_IMAGES)',
            type: 'value_error.input_images',
          },
        ],
      },
    ]);
    expect(await queued()).toBe(before);
  });

  it('counts the links of every field together, and names the field that goes past the limit', async () => {
    const response = await controlnet({ init_images: links(40), mask_images: links(30) });
    expect(response.status).toBe(422);
    expect((response.body as { detail: { loc: unknown[]; msg: string }[] }).detail[0]).toMatchObject({
      loc: ['body', 'mask_images'],
      msg: 'the request names 70 input images, more than the 64 a task may have (TASK_MAX_INPUT_IMAGES)',
    });
  });

  it('queues a request of as many links as a task may have', async () => {
    expect((await controlnet({ init_images: links(64) })).status).toBe(200);
  });

  it('counts a training’s images, and not a model load’s sample images (links shown, never fetched)', async () => {
    const training = await api.request('POST', '/train_model/v1', {
      json: { ...api.example('/train_model/v1'), images: links(65) },
    });
    expect(training.status).toBe(422);
    const load = await api.request('POST', '/load_model/v1', {
      json: { ...api.example('/load_model/v1'), sample_images: links(100) },
    });
    expect(load.status, JSON.stringify(load.body)).toBe(200);
  });

  it('refuses a body of a megabyte of links without fetching or queueing any', async () => {
    const link = `${api.imagesUrl}/photo.png`;
    const many = Array<string>(Math.floor(1_000_000 / (link.length + 3))).fill(link);
    const response = await controlnet({ init_images: many });
    expect(response.status).toBe(422);
    expect((response.body as { detail: { msg: string }[] }).detail[0]!.msg).toBe(
      `the request names ${many.length} input images, more than the 64 a task may have (TASK_MAX_INPUT_IMAGES)`,
    );
  });
});
