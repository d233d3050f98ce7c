import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

/**
 * Tenant isolation on every read path: bob asking for alice's rows gets exactly what he gets for
 * ids that never existed.
 */
describe('tenant isolation over HTTP', () => {
  let api: ApiHarness;
  let taskId: string;
  let trainingId: string;
  let modelId: string;
  let imageId: string;

  beforeAll(async () => {
    api = await startApiHarness();
    const submitted = await api.request('POST', '/sd/text2image/v1', {
      json: { prompt: 'private', negative_prompt: '', width: 16, height: 16, batch_id: 'alice-batch' },
    });
    taskId = (submitted.body as { id: string }).id;
    await api.settle(`/sd/text2image/v1/status/${taskId}`, api.alice.key);
    const training = await api.request('POST', '/train_model/v1', {
      json: {
        model_name: 'mine',
        base_model: 'sdxl',
        max_train_steps: 10,
        validation_prompt: 'v',
        instance_prompt: 'i',
        images: [`${api.imagesUrl}/photo.png`],
        description: 'd',
        visibility: 'private',
      },
    });
    trainingId = (training.body as { id: string }).id;
    modelId = (await api.settle(`/train_model/v1/status/${trainingId}`, api.alice.key)).model_id as string;
    const images = (await api.request('GET', '/images/v1')).body as { image_id: string }[];
    imageId = images[0]!.image_id;
  });
  afterAll(() => api.close());

  const missingTask = '7d9f1c9e-2a4b-4c1d-9e8f-0a1b2c3d4e5f';

  it.each([
    [
      'a task status',
      () => `/sd/text2image/v1/status/${taskId}`,
      () => `/sd/text2image/v1/status/${missingTask}`,
    ],
    [
      'a training status',
      () => `/train_model/v1/status/${trainingId}`,
      () => `/train_model/v1/status/${missingTask}`,
    ],
    ['a model', () => `/models/v1/${modelId}`, () => '/models/v1/0123456789abcdef0123456789abcdef'],
    ['an image', () => `/images/v1/${imageId}`, () => `/images/v1/${missingTask}`],
    ['a batch', () => '/batches/v1/alice-batch', () => '/batches/v1/no-such-batch'],
  ])("answers another owner's %s exactly like a missing one", async (_what, theirs, missing) => {
    const own = await api.request('GET', theirs(), { key: api.alice.key });
    expect(own.status).toBe(200);
    const foreign = await api.request('GET', theirs(), { key: api.bob.key });
    const absent = await api.request('GET', missing(), { key: api.bob.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(absent.body);
  });

  it('answers a malformed task id like a missing one', async () => {
    const response = await api.request('GET', '/sd/text2image/v1/status/not-a-uuid');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: 'Task not found' });
  });

  it("answers the owner's task on another pipeline's status path, and another owner's nowhere", async () => {
    const own = await api.request('GET', `/sd/text2image/v1/status/${taskId}`);
    const elsewhere = await api.request('GET', `/sdxl/text2image/v1/status/${taskId}`);
    expect([elsewhere.status, elsewhere.body]).toEqual([200, own.body]);
    const foreign = await api.request('GET', `/sdxl/text2image/v1/status/${taskId}`, { key: api.bob.key });
    expect([foreign.status, foreign.body]).toEqual([404, { detail: 'Task not found' }]);
  });

  it("keeps another owner's models and images out of listings", async () => {
    const models = (await api.request('GET', '/models/v1', { key: api.bob.key })).body as unknown[];
    const images = (await api.request('GET', '/images/v1', { key: api.bob.key })).body as unknown[];
    expect(models).toEqual([]);
    expect(images).toEqual([]);
    expect((await api.request('GET', `/images/v1?before=${imageId}`, { key: api.bob.key })).body).toEqual([]);
  });

  it("answers each owner's own subscription and webhook secret", async () => {
    const alice = (await api.request('GET', '/subscription/v1', { key: api.alice.key })).body as {
      user_id: string;
    };
    const bob = (await api.request('GET', '/subscription/v1', { key: api.bob.key })).body as {
      user_id: string;
    };
    expect([alice.user_id, bob.user_id]).toEqual([api.alice.ownerId, api.bob.ownerId]);
    const s1 = (await api.request('GET', '/webhook_secret/v1', { key: api.alice.key })).body;
    const s2 = (await api.request('GET', '/webhook_secret/v1', { key: api.bob.key })).body;
    expect(s1).not.toEqual(s2);
  });

  it("refuses to sync another owner's model", async () => {
    const response = await api.request('POST', '/sync_model/v1', {
      key: api.enterprise.key,
      json: { model_id: modelId, server_id: 'gpu-1' },
    });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: 'Model not found' });
  });
});
