import { describe, expect, it } from 'vitest';
import { eventually } from '../support/fakes.ts';
import { gatedApi, uniqueName } from '../support/gated-engine.ts';

const T2I = '/sd/text2image/v1';
const SDXL = '/sdxl/text2image/v1';

/**
 * What a pending status adds over HTTP: `progress` from the engine, `queue_position` counted as
 * the claim takes tasks (fair turns between owners, server_id routing), and `eta_seconds` from the
 * recent run times of the pipeline, each only when known.
 */
describe('progress, place in line and eta over HTTP', () => {
  const gated = gatedApi();

  async function submit(
    prompt: string,
    options: { key?: string; path?: string; extra?: Record<string, unknown> } = {},
  ): Promise<string> {
    const response = await gated.api.request('POST', options.path ?? T2I, {
      key: options.key ?? gated.api.alice.key,
      json: { prompt, negative_prompt: '', width: 16, height: 16, ...options.extra },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return (response.body as { id: string }).id;
  }

  const status = async (id: string, key = gated.api.alice.key, path = T2I) =>
    (await gated.api.request('GET', `${path}/status/${id}`, { key })).body as Record<string, unknown>;

  /** Polls alice's task until its status passes `accept`. */
  const statusWhen = (id: string, path: string, accept: (body: Record<string, unknown>) => boolean) =>
    eventually(async () => {
      const body = await status(id, gated.api.alice.key, path);
      return accept(body) ? body : undefined;
    });

  /** A task held running inside the engine (on the shared pool unless `extra` routes it). */
  async function blocker(options: { key?: string; path?: string; extra?: Record<string, unknown> } = {}) {
    const name = uniqueName();
    const id = await submit(`gate:${name}`, options);
    await gated.engine.gate(name).started;
    return { id, gate: gated.engine.gate(name) };
  }

  /** Polls until the tasks' queue positions are the expected ones (the API retakes its snapshot every few seconds). */
  async function positions(tasks: { id: string; key?: string; path?: string }[], expected: number[]) {
    return eventually(async () => {
      const found = [];
      for (const task of tasks) found.push((await status(task.id, task.key, task.path)).queue_position);
      return JSON.stringify(found) === JSON.stringify(expected) ? found : undefined;
    }, 20_000).catch(async () => {
      const found = [];
      for (const task of tasks) found.push((await status(task.id, task.key, task.path)).queue_position);
      throw new Error(`queue positions ${JSON.stringify(found)}, expected ${JSON.stringify(expected)}`);
    });
  }

  it('answers the progress the engine reports while the task runs, and no place in line', async () => {
    const { id, gate } = await blocker();
    expect(await status(id)).not.toHaveProperty('progress');
    gate.progress(0.4);
    const body = await statusWhen(id, T2I, (found) => found.progress === 0.4);
    expect(body).toMatchObject({ status: 'PENDING', progress: 0.4 });
    expect(body).not.toHaveProperty('queue_position');
    gate.open();
    expect(await gated.api.settle(`${T2I}/status/${id}`, gated.api.alice.key)).not.toHaveProperty('progress');
  });

  it('counts the place in line as the fair claim takes turns between owners, and the claim agrees', async () => {
    const running = await blocker();
    const a = [await submit('a1'), await submit('a2'), await submit('a3')];
    const b1 = await submit('b1', { key: gated.api.bob.key });
    // Alice has a task running and bob none, so bob's task goes first; then one task per owner per turn.
    await positions(
      [{ id: b1, key: gated.api.bob.key }, { id: a[0]! }, { id: a[1]! }, { id: a[2]! }],
      [0, 1, 2, 3],
    );
    running.gate.open();
    for (const id of a) await gated.api.settle(`${T2I}/status/${id}`, gated.api.alice.key);
    await gated.api.settle(`${T2I}/status/${b1}`, gated.api.bob.key);
    const { rows } = await gated.api.db.pool.query<{ id: string }>(
      'SELECT id FROM tasks WHERE id = ANY($1::uuid[]) ORDER BY started_at',
      [[b1, ...a]],
    );
    expect(rows.map((row) => row.id)).toEqual([b1, ...a]);
  });

  it('counts only what the same workers run first under server_id routing', async () => {
    const key = gated.api.enterprise.key;
    const onServer = await blocker({ key, extra: { server_id: 'gpu-1' } });
    const shared = await blocker();
    const queuedShared = await submit('shared, behind the blocker');
    const e1 = await submit('to gpu-1', { key, extra: { server_id: 'gpu-1' } });
    const e2 = await submit('to any of mine', { key, extra: { server_id: 'any' } });
    // gpu-1 serves its own route and the owner's pool, oldest first; the shared queue is apart.
    await positions([{ id: e1, key }, { id: e2, key }, { id: queuedShared }], [0, 1, 0]);
    onServer.gate.open();
    shared.gate.open();
    for (const id of [e1, e2]) await gated.api.settle(`${T2I}/status/${id}`, key);
    await gated.api.settle(`${T2I}/status/${queuedShared}`, gated.api.alice.key);
  });

  it('estimates the eta from recent run times of the same pipeline, and only once there are some', async () => {
    const running = await blocker();
    const first = await submit('no history yet', { path: SDXL });
    await positions([{ id: first, path: SDXL }], [0]);
    expect(await status(first, gated.api.alice.key, SDXL)).not.toHaveProperty('eta_seconds');
    running.gate.open();
    await gated.api.settle(`${SDXL}/status/${first}`, gated.api.alice.key);

    // One SDXL run of about 400 ms, then a task waiting behind another.
    const timed = uniqueName();
    const measured = await submit(`gate:${timed}`, { path: SDXL });
    await gated.engine.gate(timed).started;
    await new Promise((resolve) => setTimeout(resolve, 400));
    gated.engine.gate(timed).open();
    await gated.api.settle(`${SDXL}/status/${measured}`, gated.api.alice.key);

    const ahead = await blocker();
    const waiting = await submit('after one run', { path: SDXL });
    const estimate = await statusWhen(waiting, SDXL, (body) => typeof body.eta_seconds === 'number');
    // Next in line (position 0, one slot busy): its own run, as long as SDXL runs took lately.
    const { rows } = await gated.api.db.pool.query<{ seconds: number }>(
      `SELECT avg(extract(epoch from finished_at - started_at))::float8 AS seconds FROM tasks
       WHERE endpoint = $1 AND state = 'succeeded'`,
      [SDXL],
    );
    expect(estimate.queue_position).toBe(0);
    expect(rows[0]!.seconds).toBeGreaterThan(0.15);
    expect(estimate.eta_seconds).toBeCloseTo(rows[0]!.seconds, 1);

    ahead.gate.open();
    await gated.api.settle(`${SDXL}/status/${waiting}`, gated.api.alice.key);
    // A running task with progress: the time left at the pace it has kept.
    const paced = uniqueName();
    const runningSdxl = await submit(`gate:${paced}`, { path: SDXL });
    await gated.engine.gate(paced).started;
    await new Promise((resolve) => setTimeout(resolve, 300));
    gated.engine.gate(paced).progress(0.5);
    const halfway = await statusWhen(
      runningSdxl,
      SDXL,
      (body) => body.progress === 0.5 && typeof body.eta_seconds === 'number',
    );
    expect(halfway.eta_seconds).toBeGreaterThanOrEqual(0.2);
    expect(halfway.eta_seconds).toBeLessThan(5);
    gated.engine.gate(paced).open();
    await gated.api.settle(`${SDXL}/status/${runningSdxl}`, gated.api.alice.key);
  });
});
