import { endpoints } from '@imagegen/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

const NOT_FOUND = { detail: 'Task not found' };

/**
 * A task's status answers at the status path of any task pipeline, as the original's status read
 * looked a task up by its id alone: its frontend polls upscaler and model-switch tasks at
 * /bgchanger/v1/status/{id}. Each task answers in its own shape; another owner's stays not found.
 */
describe("the owner's task at any pipeline's status path", () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApiHarness();
  });
  afterAll(() => api.close());

  async function submit(path: string, body = api.example(path), key = api.alice.key): Promise<string> {
    const response = await api.request('POST', path, { json: body, key });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return (response.body as { id: string }).id;
  }

  it.each(['/upscaler/v1', '/modelswitch/v1'])(
    'answers a %s task at /bgchanger/v1/status/{id} exactly as at its own status path',
    async (path) => {
      const id = await submit(path);
      const done = await api.settle(`${path}/status/${id}`, api.alice.key);
      // The frontend's cards wait for `image_url`: the first output's link.
      expect(done).toEqual({
        status: 'SUCCESS',
        download_urls: [expect.stringContaining('/files/')],
        image_url: (done.download_urls as string[])[0],
        // The upscaler's request has `base64` (not asked for here): its shape carries `image`.
        ...(path === '/upscaler/v1' ? { image: null } : {}),
      });
      const polled = await api.request('GET', `/bgchanger/v1/status/${id}`);
      expect([polled.status, polled.body]).toEqual([200, done]);
    },
  );

  it('answers each task in its own shape: a training at a generation path, a generation and a model load elsewhere', async () => {
    const training = await submit('/train_model/v1');
    const trained = await api.settle(`/train_model/v1/status/${training}`, api.alice.key);
    expect(trained).toEqual({
      status: 'completed',
      model_id: expect.any(String),
      training_duration_seconds: expect.any(Number),
    });
    const atGeneration = await api.request('GET', `/sd/text2image/v1/status/${training}`);
    expect([atGeneration.status, atGeneration.body]).toEqual([200, trained]);

    const image = await submit('/sd/text2image/v1', {
      prompt: 'a',
      negative_prompt: '',
      width: 16,
      height: 16,
    });
    const drawn = await api.settle(`/sd/text2image/v1/status/${image}`, api.alice.key);
    const atTraining = await api.request('GET', `/train_model/v1/status/${image}`);
    expect([atTraining.status, atTraining.body]).toEqual([200, drawn]);

    const load = await submit('/load_model/v1');
    const loaded = await api.settle(`/load_model/v1/status/${load}`, api.alice.key);
    expect(loaded).toEqual({ status: 'SUCCESS', model_id: expect.any(String) });
    const atUpscaler = await api.request('GET', `/upscaler/v1/status/${load}`);
    expect([atUpscaler.status, atUpscaler.body]).toEqual([200, loaded]);
  });

  it("answers another owner's task 404 Task not found at every status path and its aliases", async () => {
    const id = await submit('/bgchanger/v1');
    await api.settle(`/bgchanger/v1/status/${id}`, api.alice.key);
    const paths = endpoints.flatMap((endpoint) =>
      endpoint.status ? [endpoint.status.path, ...(endpoint.status.aliases ?? []).map((a) => a.path)] : [],
    );
    expect(paths.length).toBeGreaterThan(30);
    for (const path of paths) {
      const url = path.replace(/\{\w+\}$/, id);
      const foreign = await api.request('GET', url, { key: api.bob.key });
      expect([url, foreign.status, foreign.body]).toEqual([url, 404, NOT_FOUND]);
      const own = await api.request('GET', url, { key: api.alice.key });
      expect([url, own.status]).toEqual([url, 200]);
    }
  });

  it('answers a waiting submission with the final status every status path then reads', async () => {
    const response = await api.request('POST', '/upscaler/v1', {
      json: api.example('/upscaler/v1'),
      headers: { Prefer: 'wait=30' },
    });
    expect(response.headers.get('preference-applied')).toBe('wait=30');
    const { id, ...final } = response.body as { id: string; status: string };
    expect(final.status).toBe('SUCCESS');
    for (const path of ['/upscaler/v1', '/bgchanger/v1', '/train_model/v1']) {
      const polled = await api.request('GET', `${path}/status/${id}`);
      expect([polled.status, polled.body]).toEqual([200, final]);
    }
  });
});
