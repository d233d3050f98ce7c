import { endpointByPath } from '@imagegen/contract';
import { describe, expect, it } from 'vitest';
import { gatedApi, uniqueName } from '../support/gated-engine.ts';

const T2I = '/sd/text2image/v1';

/**
 * The submission headers over HTTP: `Prefer: wait=N` answers the final status when the task ends
 * in time (else the usual answer), and `Idempotency-Key` makes a retried submission answer the
 * task the first one created, including two sent at the same moment.
 */
describe('waiting and idempotent submissions over HTTP', () => {
  const gated = gatedApi();
  const body = (prompt: string, extra: Record<string, unknown> = {}) => ({
    prompt,
    negative_prompt: '',
    width: 16,
    height: 16,
    ...extra,
  });
  const post = (json: unknown, headers: Record<string, string>, key = gated.api.alice.key, path = T2I) =>
    gated.api.request('POST', path, { key, json, headers });

  async function tasksWithPrompt(prompt: string): Promise<string[]> {
    const { rows } = await gated.api.db.pool.query<{ id: string }>(
      `SELECT id FROM tasks WHERE input->>'prompt' = $1 ORDER BY created_at`,
      [prompt],
    );
    return rows.map((row) => row.id);
  }

  it('lets browsers send the headers and read the answers about them (CORS)', async () => {
    const preflight = await gated.api.request('OPTIONS', T2I, { key: null });
    const allowed = preflight.headers.get('access-control-allow-headers') ?? '';
    for (const header of ['Prefer', 'Idempotency-Key', 'Last-Event-ID', 'X-Request-Id'])
      expect(allowed).toContain(header);
    const answer = await post(body('cors'), { Prefer: 'wait=5' });
    expect(answer.headers.get('access-control-expose-headers')).toBe(
      'Preference-Applied, Idempotent-Replayed, X-Request-Id',
    );
  });

  describe('Prefer: wait=N', () => {
    it('answers the final status, with the id, when the task ends within N seconds', async () => {
      const response = await post(body('quick'), { Prefer: 'wait=10' });
      expect(response.status).toBe(200);
      expect(response.headers.get('preference-applied')).toBe('wait=10');
      const answer = response.body as { id: string; status: string; download_urls: string[] };
      expect(answer.status).toBe('SUCCESS');
      const { id, ...final } = answer;
      expect((await gated.api.request('GET', `${T2I}/status/${id}`)).body).toEqual(final);
      expect((await fetch(answer.download_urls[0]!)).status).toBe(200);
    });

    it('answers the usual PENDING after N seconds when the task is still running; it is the same task', async () => {
      const name = uniqueName();
      const started = Date.now();
      const response = await post(body(`gate:${name}`), { Prefer: 'respond-async, wait=1' });
      const waited = Date.now() - started;
      expect(response.status).toBe(200);
      expect(response.headers.get('preference-applied')).toBe('wait=1');
      expect(response.body).toEqual({ status: 'PENDING', id: expect.any(String) });
      expect(waited).toBeGreaterThanOrEqual(950);
      expect(waited).toBeLessThan(3_000);
      const { id } = response.body as { id: string };
      expect(await tasksWithPrompt(`gate:${name}`)).toEqual([id]);
      gated.engine.gate(name).open();
      expect((await gated.api.settle(`${T2I}/status/${id}`, gated.api.alice.key)).status).toBe('SUCCESS');
    });

    it('answers a training with its final training shape', async () => {
      const training = gated.api.example('/train_model/v1');
      const response = await post(training, { Prefer: 'wait=10' }, gated.api.alice.key, '/train_model/v1');
      expect(response.body).toMatchObject({ status: 'completed', id: expect.any(String) });
    });

    it('answers without waiting and without Preference-Applied when no wait is asked', async () => {
      const variants: Record<string, string>[] = [{}, { Prefer: 'wait=0' }, { Prefer: 'return=minimal' }];
      for (const headers of variants) {
        const response = await post(body('no wait'), headers);
        expect(response.body).toMatchObject({ status: 'PENDING' });
        expect(response.headers.get('preference-applied')).toBeNull();
      }
    });

    it('refuses a wait that is not a whole number of seconds up to 60 with a 422 naming the header', async () => {
      for (const value of ['wait=61', 'wait=abc', 'wait=1.5', 'wait=-1', 'wait=']) {
        const prompt = `refused ${uniqueName()}`;
        const response = await post(body(prompt), { Prefer: value });
        expect(response.status, value).toBe(422);
        expect(response.body).toEqual({
          detail: [
            {
              loc: ['header', 'Prefer'],
              msg: 'wait must be a whole number of seconds from 0 to 60',
              type: 'value_error.prefer.wait',
            },
          ],
        });
        expect(await tasksWithPrompt(prompt)).toEqual([]);
      }
    });
  });

  describe('Idempotency-Key', () => {
    it('answers a retry with the same key and body with the same task, and queues it once', async () => {
      const key = `retry-${uniqueName()}`;
      const prompt = `idempotent ${uniqueName()}`;
      const first = await post(body(prompt, { queued_image_urls: true, seed: -1 }), {
        'Idempotency-Key': key,
      });
      expect(first.status).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      // The same request spelled differently (key order, a default written out) is the same request.
      const retried = await post(
        { width: 16, height: 16, seed: -1, negative_prompt: '', prompt, queued_image_urls: true },
        { 'Idempotency-Key': key },
      );
      expect(retried.status).toBe(200);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      expect(retried.body).toEqual(first.body);
      expect(await tasksWithPrompt(prompt)).toEqual([(first.body as { id: string }).id]);
    });

    it('refuses the same key with a different body with a 422 that says so', async () => {
      const key = `reused-${uniqueName()}`;
      expect((await post(body('one request'), { 'Idempotency-Key': key })).status).toBe(200);
      const prompt = `another request ${uniqueName()}`;
      const response = await post(body(prompt), { 'Idempotency-Key': key });
      expect(response.status).toBe(422);
      expect(response.body).toEqual({
        detail: [
          {
            loc: ['header', 'Idempotency-Key'],
            msg:
              'this Idempotency-Key was used in the last 24 hours with a different request: send that ' +
              'request again to get its task, or use a new key for a new request',
            type: 'value_error.idempotency_key.reused',
          },
        ],
      });
      expect(await tasksWithPrompt(prompt)).toEqual([]);
      // Another path is another request too.
      const elsewhere = await post(
        body('one request'),
        { 'Idempotency-Key': key },
        gated.api.alice.key,
        '/sdxl/text2image/v1',
      );
      expect(elsewhere.status).toBe(422);
    });

    it('creates one task for concurrent submissions with one key', async () => {
      const key = `burst-${uniqueName()}`;
      const prompt = `burst ${uniqueName()}`;
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => post(body(prompt), { 'Idempotency-Key': key })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      const ids = new Set(answers.map((answer) => (answer.body as { id: string }).id));
      expect(ids.size).toBe(1);
      expect(await tasksWithPrompt(prompt)).toEqual([...ids]);
      expect(answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true')).toHaveLength(
        11,
      );
    });

    it('keeps keys per owner, and frees a key after 24 hours', async () => {
      const key = `shared-name-${uniqueName()}`;
      const prompt = `per owner ${uniqueName()}`;
      const alice = await post(body(prompt), { 'Idempotency-Key': key });
      const bob = await post(body(prompt), { 'Idempotency-Key': key }, gated.api.bob.key);
      expect((bob.body as { id: string }).id).not.toBe((alice.body as { id: string }).id);

      await gated.api.db.pool.query(
        `UPDATE idempotency_keys SET created_at = now() - interval '25 hours'
         WHERE owner_id = $1 AND idempotency_key = $2`,
        [gated.api.alice.ownerId, key],
      );
      const later = await post(body(`a new request ${uniqueName()}`), { 'Idempotency-Key': key });
      expect(later.status).toBe(200);
      expect((later.body as { id: string }).id).not.toBe((alice.body as { id: string }).id);
      expect(later.headers.get('idempotent-replayed')).toBeNull();
    });

    it('makes a model task once, with its model row once', async () => {
      const key = `model-${uniqueName()}`;
      const load: Record<string, unknown> = {
        ...(endpointByPath('/load_model/v1')!.example as Record<string, unknown>),
        model_name: `idempotent model ${uniqueName()}`,
      };
      delete load.server_id;
      const answers = await Promise.all(
        [1, 2, 3].map(() => post(load, { 'Idempotency-Key': key }, gated.api.alice.key, '/load_model/v1')),
      );
      expect(new Set(answers.map((answer) => (answer.body as { id: string }).id)).size).toBe(1);
      const { rows } = await gated.api.db.pool.query('SELECT 1 FROM models WHERE model_name = $1', [
        load.model_name,
      ]);
      expect(rows).toHaveLength(1);
    });

    it('refuses an empty or over-long key, and leaves routing refusals without a task', async () => {
      for (const key of [' ', 'k'.repeat(256)]) {
        const response = await post(body('bad key'), { 'Idempotency-Key': key });
        expect(response.status).toBe(422);
        expect((response.body as { detail: { loc: string[] }[] }).detail[0]!.loc).toEqual([
          'header',
          'Idempotency-Key',
        ]);
      }
      const key = `refused-${uniqueName()}`;
      const refused = await post(body('routed', { server_id: 'gpu-1' }), { 'Idempotency-Key': key });
      expect(refused.status).toBe(403);
      // The refusal kept nothing: the key is free for a request that is accepted.
      expect((await post(body('accepted'), { 'Idempotency-Key': key })).status).toBe(200);
    });

    it('combines with Prefer: wait: the retry waits for the same task', async () => {
      const key = `wait-${uniqueName()}`;
      const first = await post(body('waited once'), { 'Idempotency-Key': key, Prefer: 'wait=10' });
      const again = await post(body('waited once'), { 'Idempotency-Key': key, Prefer: 'wait=10' });
      expect(first.body).toMatchObject({ status: 'SUCCESS' });
      expect(again.body).toEqual(first.body);
    });
  });
});
