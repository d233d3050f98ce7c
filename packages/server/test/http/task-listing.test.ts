import { compileRequestValidator, endpointByPath } from '@imagegen/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskListEntry } from '../../src/tasks/list-tasks.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
import { gatedEngine } from '../support/gated-engine.ts';

const T2I = '/sd/text2image/v1';
const SDXL = '/sdxl/text2image/v1';
const I2I = '/sd/image2image/v1';

interface Page {
  tasks: TaskListEntry[];
  next_cursor: string | null;
}

/** GET /tasks/v1 over HTTP: the caller's tasks newest first, filtered, and paged by cursor. */
describe('the task listing over HTTP', () => {
  let api: ApiHarness;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const engine = gatedEngine();
    api = await startApiHarness({ engine });
    const submit = async (name: string, path: string, extra: Record<string, unknown> = {}) => {
      const response = await api.request('POST', path, {
        json: { prompt: name, negative_prompt: '', width: 16, height: 16, ...extra },
      });
      ids[name] = (response.body as { id: string }).id;
    };
    await submit('one', T2I, { batch_id: 'night' });
    await submit('two', SDXL, { batch_id: 'night' });
    await submit('three', T2I);
    // An image that is not one fails its task.
    const image2image = endpointByPath(I2I)!.example as Record<string, unknown>;
    await submit('broken', I2I, { ...image2image, init_image: `${api.imagesUrl}/not-image.txt` });
    // A task held in the engine, then cancelled.
    await submit('gate:cancelled', T2I);
    ids.cancelled = ids['gate:cancelled']!;
    delete ids['gate:cancelled'];
    await engine.gate('cancelled').started;
    await api.request('POST', `${T2I}/cancel/${ids.cancelled}`);
    for (const [name, path] of [
      ['one', T2I],
      ['two', SDXL],
      ['three', T2I],
      ['broken', I2I],
    ] as const) {
      await api.settle(`${path}/status/${ids[name]}`, api.alice.key);
    }
    await api.request('POST', T2I, {
      key: api.bob.key,
      json: { prompt: 'bob', negative_prompt: '', width: 16, height: 16, batch_id: 'night' },
    });
  });
  afterAll(() => api.close());

  const list = async (query = '', key = api.alice.key) => {
    const response = await api.request('GET', `/tasks/v1${query}`, { key });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as Page;
  };

  it("lists the caller's tasks newest first, each with pipeline, state, times and status path", async () => {
    const page = await list();
    expect(page.tasks.map((task) => task.id)).toEqual(
      ['cancelled', 'broken', 'three', 'two', 'one'].map((name) => ids[name]),
    );
    expect(page.next_cursor).toBeNull();
    const two = page.tasks.find((task) => task.id === ids.two)!;
    expect(two).toEqual({
      id: ids.two,
      pipeline: SDXL,
      request: expect.objectContaining({ prompt: 'two', width: 16, height: 16, batch_id: 'night' }),
      state: 'succeeded',
      engine: 'gated',
      placeholder: false,
      batch_id: 'night',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      finished_at: expect.stringMatching(/Z$/),
      status_path: `${SDXL}/status/${ids.two}`,
    });
    expect(Date.parse(two.finished_at!)).toBeGreaterThanOrEqual(Date.parse(two.created_at));
    expect(page.tasks.find((task) => task.id === ids.broken)?.state).toBe('failed');
    expect(page.tasks.find((task) => task.id === ids.cancelled)?.state).toBe('cancelled');
    // No engine ran the task whose input failed, nor the one cancelled while the engine held it.
    expect(page.tasks.find((task) => task.id === ids.broken)).toMatchObject({
      engine: null,
      placeholder: false,
    });
    expect(page.tasks.find((task) => task.id === ids.cancelled)).toMatchObject({ engine: null });
    // The status path it names answers the task.
    const status = await api.request('GET', two.status_path);
    expect(status.body).toMatchObject({ status: 'SUCCESS' });
  });

  it('gives each task its request as validated: defaults filled in, the drawn seed, ready to submit again', async () => {
    const three = (await list()).tasks.find((task) => task.id === ids.three)!;
    expect(three.request).toMatchObject({ prompt: 'three', negative_prompt: '', num_inference_steps: 20 });
    expect(three.request.seed).toEqual(expect.any(Number));
    expect(three.request.seed).toBeGreaterThanOrEqual(0);
    expect(compileRequestValidator(endpointByPath(T2I)!)(structuredClone(three.request)).ok).toBe(true);
  });

  it('filters by state (cancelled apart from failed), pipeline and batch', async () => {
    const ofState = async (state: string) => (await list(`?status=${state}`)).tasks.map((task) => task.id);
    expect(await ofState('failed')).toEqual([ids.broken]);
    expect(await ofState('cancelled')).toEqual([ids.cancelled]);
    expect(await ofState('succeeded')).toEqual([ids.three, ids.two, ids.one]);
    expect(await ofState('queued')).toEqual([]);
    expect((await list(`?pipeline=${SDXL}`)).tasks.map((task) => task.id)).toEqual([ids.two]);
    expect((await list('?batch_id=night')).tasks.map((task) => task.id)).toEqual([ids.two, ids.one]);
    expect((await list(`?batch_id=night&pipeline=${T2I}&status=succeeded`)).tasks.map((t) => t.id)).toEqual([
      ids.one,
    ]);
  });

  it('pages with limit and next_cursor: every task once, in order, and tasks submitted meanwhile shift nothing', async () => {
    const first = await list('?limit=2');
    expect(first.tasks.map((task) => task.id)).toEqual([ids.cancelled, ids.broken]);
    expect(first.next_cursor).toEqual(expect.any(String));
    // A new task is newer than every page: it does not move the pages after the first.
    await api.request('POST', T2I, {
      json: { prompt: 'meanwhile', negative_prompt: '', width: 16, height: 16 },
    });
    const second = await list(`?limit=2&cursor=${first.next_cursor}`);
    expect(second.tasks.map((task) => task.id)).toEqual([ids.three, ids.two]);
    const third = await list(`?limit=2&cursor=${second.next_cursor}`);
    expect(third.tasks.map((task) => task.id)).toEqual([ids.one]);
    expect(third.next_cursor).toBeNull();
  });

  it("never lists another owner's tasks", async () => {
    const bobs = await list('', api.bob.key);
    expect(bobs.tasks).toHaveLength(1);
    expect(bobs.tasks[0]!.batch_id).toBe('night');
    expect(Object.values(ids)).not.toContain(bobs.tasks[0]!.id);
  });

  it('refuses a cursor it never handed out, an unknown state or pipeline and a limit out of bounds with a 422', async () => {
    for (const [query, field] of [
      ['?cursor=nonsense', 'cursor'],
      [`?cursor=${Buffer.from('12.not-a-uuid').toString('base64url')}`, 'cursor'],
      ['?status=PENDING', 'status'],
      ['?pipeline=/nope/v1', 'pipeline'],
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
    ] as const) {
      const response = await api.request('GET', `/tasks/v1${query}`);
      expect(response.status, query).toBe(422);
      const detail = (response.body as { detail: { loc: string[] }[] }).detail;
      expect(detail[0]!.loc, query).toEqual(['query', field]);
    }
  });
});
