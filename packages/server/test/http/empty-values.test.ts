import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

const HEX = '^#(?:[0-9a-fA-F]{3}){1,2}$';

/**
 * Over HTTP, what the original's frontend sends for a choice left empty: `style_image: ""` on
 * /bgchanger/v1, a palette padded to five with `""` on /generate/v3. The task is queued with the
 * request as if the empty values were never sent (the listing shows what the worker runs), and a
 * wrong value next to them is refused where it was sent.
 */
describe('empty values over HTTP', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness({ withWorkers: false });
  });
  afterAll(() => api.close());

  /** The request the task stored (defaults filled in), from the owner's task listing. */
  async function storedRequest(id: string): Promise<Record<string, unknown>> {
    const listing = await api.request('GET', '/tasks/v1?limit=100');
    const tasks = (listing.body as { tasks: { id: string; request: Record<string, unknown> }[] }).tasks;
    return tasks.find((task) => task.id === id)!.request;
  }

  async function submitted(path: string, body: Record<string, unknown>): Promise<string> {
    const response = await api.request('POST', path, { json: body });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ status: 'PENDING', id: expect.any(String) });
    return (response.body as { id: string }).id;
  }

  it("queues the frontend's background change without a style image", async () => {
    const init = `${api.imagesUrl}/photo.png`;
    const id = await submitted('/bgchanger/v1', {
      init_image: init,
      prompt: 'on a marble table',
      style_image: '',
      samples: 1,
      negative_prompt: 'pixelated, low res, blurry, watermark, text, bad anatomy',
      seed: -1,
      num_outputs: 1,
    });
    const request = await storedRequest(id);
    expect(request).not.toHaveProperty('style_image');
    expect(request).toMatchObject({
      init_image: init,
      prompt: 'on a marble table',
      negative_prompt: 'pixelated, low res, blurry, watermark, text, bad anatomy',
    });
  });

  it("queues the frontend's padded palette with its colours alone, in order", async () => {
    const id = await submitted('/generate/v3', {
      prompt: 'a lighthouse at dawn',
      palette: ['#006400', '#228B22', '#32CD32', '#90EE90', ''],
    });
    expect((await storedRequest(id)).palette).toEqual(['#006400', '#228B22', '#32CD32', '#90EE90']);
    const none = await submitted('/generate/v3', { prompt: 'a lighthouse', palette: ['', '', '', '', ''] });
    expect((await storedRequest(none)).palette).toEqual([]);
  });

  it('refuses a wrong colour at the place it was sent, and a style image that is no URL', async () => {
    const palette = await api.request('POST', '/generate/v3', {
      json: { prompt: 'a', palette: ['#fff', '', 'red', '', ''] },
    });
    expect([palette.status, palette.body]).toEqual([
      422,
      {
        detail: [
          {
            loc: ['body', 'palette', 2],
            msg: `string does not match regex "${HEX}"`,
            type: 'value_error.str.regex',
            ctx: { pattern: HEX },
          },
        ],
      },
    ]);
    const style = await api.request('POST', '/bgchanger/v1', {
      json: {
        init_image: `${api.imagesUrl}/photo.png`,
        prompt: 'a',
        negative_prompt: '',
        style_image: 'nope',
      },
    });
    expect([style.status, style.body]).toEqual([
      422,
      {
        detail: [
          {
            loc: ['body', 'style_image'],
            msg: 'invalid or missing URL scheme',
            type: 'value_error.url.scheme',
          },
        ],
      },
    ]);
  });

  it('takes "" as left out in the optional image fields of other pipelines too', async () => {
    const face = await submitted('/modelswitch/v1', {
      input_image: `${api.imagesUrl}/photo.png`,
      prompt: 'a tall model',
      input_face: '',
      webhook: '',
    });
    const request = await storedRequest(face);
    expect(request).not.toHaveProperty('input_face');
    expect(request).not.toHaveProperty('webhook');
  });
});
