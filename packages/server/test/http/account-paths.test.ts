import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner, setSubscription } from '../../src/auth/accounts.ts';
import { type Account, type ApiHarness, startApiHarness } from '../support/api-harness.ts';

const MISSING_OWNER = '7d9f1c9e-2a4b-4c1d-9e8f-0a1b2c3d4e5f';

/**
 * The account paths of the original service's frontend, as it calls them (its account page and
 * plan menu): GET /user/{id}, /user/{id}/images, /user/{id}/models, /user/{id}/subscriptions and
 * /images/{id}. Each answers for the key's own account only, with the records the designed paths
 * answer; another account's id answers 404 exactly as one that never existed.
 */
describe("the original frontend's account paths", () => {
  let api: ApiHarness;
  let imageId: string;
  let prompt: string;

  beforeAll(async () => {
    api = await startApiHarness();
    prompt = 'a lighthouse at dawn';
    const image = await api.request('POST', '/sd/text2image/v1', {
      json: { prompt, negative_prompt: '', width: 24, height: 16, samples: 2 },
    });
    const id = (image.body as { id: string }).id;
    await api.settle(`/sd/text2image/v1/status/${id}`, api.alice.key);
    const load = await api.request('POST', '/load_model/v1', { json: api.example('/load_model/v1') });
    await api.settle(`/load_model/v1/status/${(load.body as { id: string }).id}`, api.alice.key);
    imageId = ((await api.request('GET', '/images/v1')).body as { image_id: string }[])[0]!.image_id;
  });
  afterAll(() => api.close());

  const get = (path: string, key = api.alice.key) => api.request('GET', path, { key });

  it('answers /user/{id} with the account, its plan, and the key of the request, never cached', async () => {
    const response = await get(`/user/${api.alice.ownerId}`);
    expect([response.status, response.body]).toEqual([
      200,
      { user_id: api.alice.ownerId, api_key: api.alice.key, plan: 'STANDARD', plan_expiry_date: null },
    ]);
    expect(response.headers.get('cache-control')).toBe('no-store');
    // The id as a uuid may be written in capitals.
    const upper = await get(`/user/${api.alice.ownerId.toUpperCase()}`);
    expect([upper.status, upper.body]).toEqual([200, response.body]);
  });

  it('answers a plan that ends with its end, and none once the subscription is over', async () => {
    const carol = await createOwner(api.db.pool, { name: 'carol', plan: 'FREE' });
    const account: Account = { ownerId: carol.owner.id, key: carol.apiKey };
    const ends = new Date('2031-02-03T04:05:06.000Z');
    await setSubscription(api.db.pool, {
      ownerId: account.ownerId,
      plan: 'EPBASIC',
      podId: 'gpu-9',
      periodEnd: ends,
    });
    expect((await get(`/user/${account.ownerId}`, account.key)).body).toEqual({
      user_id: account.ownerId,
      api_key: account.key,
      plan: 'EPBASIC',
      plan_expiry_date: '2031-02-03T04:05:06.000Z',
    });

    const listed = await get(`/user/${account.ownerId}/subscriptions`, account.key);
    expect(listed.status).toBe(200);
    const subscriptions = listed.body as Record<string, unknown>[];
    // Newest first: the active EPBASIC one (as /subscription/v1 answers it), then the FREE one it ended.
    expect(subscriptions[0]).toEqual((await get('/subscription/v1', account.key)).body);
    expect(subscriptions.map((s) => [s.plan, s.pod_id, s.subscription_status, s.period_end])).toEqual([
      ['EPBASIC', 'gpu-9', 'active', '2031-02-03T04:05:06.000Z'],
      ['FREE', null, 'cancelled', expect.any(String)],
    ]);
    expect(Object.keys(subscriptions[1]!)).toEqual([
      'user_id',
      'subscription_id',
      'plan',
      'pod_id',
      'pod_status',
      'period_start',
      'period_end',
      'subscription_status',
    ]);

    await api.db.pool.query(`UPDATE subscriptions SET status = 'expired' WHERE owner_id = $1`, [
      account.ownerId,
    ]);
    expect((await get(`/user/${account.ownerId}`, account.key)).body).toMatchObject({
      plan: null,
      plan_expiry_date: null,
    });
  });

  it('answers /user/{id}/images and /user/{id}/models as /images/v1 and /models/v1 answer', async () => {
    const images = await get(`/user/${api.alice.ownerId}/images`);
    expect(images.status).toBe(200);
    expect(images.body).toEqual((await get('/images/v1')).body);
    expect(images.body).toHaveLength(2);
    const page = await get(`/user/${api.alice.ownerId}/images?limit=1`);
    expect(page.body).toEqual((await get('/images/v1?limit=1')).body);
    const refused = await get(`/user/${api.alice.ownerId}/images?limit=0`);
    expect([refused.status, refused.body]).toEqual([
      422,
      {
        detail: [
          {
            loc: ['query', 'limit'],
            msg: 'ensure this value is greater than or equal to 1',
            type: 'value_error.number.not_ge',
            ctx: { limit_value: 1 },
          },
        ],
      },
    ]);

    const models = await get(`/user/${api.alice.ownerId}/models`);
    expect(models.status).toBe(200);
    expect(models.body).toEqual((await get('/models/v1')).body);
    expect(models.body).toHaveLength(1);
  });

  it('answers /images/{id} as /images/v1/{id}, its json the request as JSON text', async () => {
    const image = await get(`/images/${imageId}`);
    expect(image.status).toBe(200);
    expect(image.body).toEqual((await get(`/images/v1/${imageId}`)).body);
    const record = image.body as Record<string, unknown>;
    expect(Object.keys(record)).toEqual([
      'image_id',
      'user_id',
      'model_id',
      'backblaze_file_id',
      'download_url',
      'json',
      'creation_timestamp',
    ]);
    // What the frontend's image dialog reads out of it.
    expect(JSON.parse(record.json as string)).toMatchObject({ prompt, width: 24, height: 16 });
  });

  it("answers another account's id, an unknown one and a malformed one 404, as the designed paths do", async () => {
    for (const path of ['', '/images', '/models', '/subscriptions']) {
      for (const id of [api.bob.ownerId, MISSING_OWNER, 'not-a-uuid']) {
        const response = await get(`/user/${id}${path}`);
        expect([`/user/${id}${path}`, response.status, response.body]).toEqual([
          `/user/${id}${path}`,
          404,
          { detail: 'User not found' },
        ]);
      }
    }
    const theirs = await get(`/images/${imageId}`, api.bob.key);
    const none = await get(`/images/${MISSING_OWNER}`, api.bob.key);
    expect([theirs.status, theirs.body]).toEqual([404, { detail: 'Image not found' }]);
    expect([none.status, none.body]).toEqual([404, { detail: 'Image not found' }]);
  });

  it('asks for the key as every other path does', async () => {
    for (const path of [`/user/${api.alice.ownerId}`, `/images/${imageId}`]) {
      const response = await api.request('GET', path, { key: null });
      expect([response.status, response.body]).toEqual([
        401,
        { detail: 'Missing API key: send it in the API-Key header' },
      ]);
    }
  });
});
