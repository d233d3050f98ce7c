import { CANCELLED_ERROR } from '@imagegen/contract';
import { describe, expect, it } from 'vitest';
import type { ApiHarness } from '../support/api-harness.ts';
import { openStream } from '../support/event-stream.ts';
import { gatedApi, uniqueName } from '../support/gated-engine.ts';

const T2I = '/sd/text2image/v1';

/**
 * Live status over HTTP: `GET <path>/status/{task_id}/events` as Server-Sent Events. An event at
 * each change of state and progress, the final status last, then the end of the stream;
 * keep-alive comments; Last-Event-ID resumes; and many open streams share one LISTEN and cost no
 * statement while nothing changes.
 */
describe('status streams over HTTP', () => {
  const gated = gatedApi({ eventsKeepAliveMs: 150 });

  async function submit(prompt: string, key = gated.api.alice.key): Promise<string> {
    const response = await gated.api.request('POST', T2I, {
      key,
      json: { prompt, negative_prompt: '', width: 16, height: 16 },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return (response.body as { id: string }).id;
  }

  const events = (id: string, headers: Record<string, string> = {}, key = gated.api.alice.key, path = T2I) =>
    openStream(`${gated.api.url}${path}/status/${id}/events`, { 'API-Key': key, ...headers });

  /** A running task held inside the engine, and its gate. */
  async function runningTask() {
    const name = uniqueName();
    const id = await submit(`gate:${name}`);
    await gated.engine.gate(name).started;
    return { id, gate: gated.engine.gate(name) };
  }

  it('sends the status at once, an event per progress step and state change, the final status last, then ends', async () => {
    const { id, gate } = await runningTask();
    const stream = await events(id);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers.get('cache-control')).toBe('no-store');
    expect(await stream.next()).toEqual({ retry: '2000' });

    const first = await stream.nextEvent();
    expect(first?.body).toMatchObject({ status: 'PENDING' });
    expect(first?.body).not.toHaveProperty('progress');
    gate.progress(0.25);
    const quarter = await stream.nextEvent();
    expect(quarter?.body).toMatchObject({ status: 'PENDING', progress: 0.25 });
    gate.progress(0.75);
    const threeQuarters = await stream.nextEvent();
    expect(threeQuarters?.body).toMatchObject({ status: 'PENDING', progress: 0.75 });
    gate.open();
    const final = await stream.nextEvent();
    expect(final?.body).toMatchObject({ status: 'SUCCESS' });
    expect(await stream.nextEvent()).toBeNull();

    const ids = [first, quarter, threeQuarters, final].map((event) => event!.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(4);
    // The last event is exactly what the status path answers.
    expect((await gated.api.request('GET', `${T2I}/status/${id}`)).body).toEqual(final!.body);
  });

  it('follows a task from the queue: its place in line, then running, then its end', async () => {
    const blocker = await runningTask();
    const name = uniqueName();
    const id = await submit(`gate:${name}`);
    const stream = await events(id);
    const queued = await stream.nextEvent();
    expect(queued?.body).toMatchObject({ status: 'PENDING', queue_position: 0 });
    blocker.gate.open();
    const running = await stream.nextEvent();
    expect(running?.body).toMatchObject({ status: 'PENDING' });
    expect(running?.body).not.toHaveProperty('queue_position');
    expect(running!.id).toBeGreaterThan(queued!.id);
    await gated.engine.gate(name).started;
    gated.engine.gate(name).open();
    expect((await stream.nextEvent())?.body).toMatchObject({ status: 'SUCCESS' });
    expect(await stream.nextEvent()).toBeNull();
  });

  it("sends a waiting task's new place in line when the tasks ahead of it move, under the same id", async () => {
    const blocker = await runningTask();
    const ahead = await submit(`gate:${uniqueName()}`);
    const name = uniqueName();
    const id = await submit(`gate:${name}`);
    const stream = await events(id);
    // The first event may come from a queue snapshot taken before these tasks existed.
    const second = await eventWhere(stream, (body) => body.queue_position === 1);
    // The task ahead leaves the queue: nothing of this task changes, but its place does.
    expect((await gated.api.request('POST', `${T2I}/cancel/${ahead}`)).status).toBe(200);
    const first = await stream.nextEvent();
    expect(first?.body).toMatchObject({ status: 'PENDING', queue_position: 0 });
    expect(first!.id).toBe(second.id);
    blocker.gate.open();
    const running = await stream.nextEvent();
    expect(running?.body).toMatchObject({ status: 'PENDING' });
    expect(running?.body).not.toHaveProperty('queue_position');
    await gated.engine.gate(name).started;
    gated.engine.gate(name).open();
    expect((await stream.nextEvent())?.body).toMatchObject({ status: 'SUCCESS' });
    // Each move waits for the stream's next look (every 2 s) at a queue snapshot old enough to be
    // retaken: 2 s, or up to 15 s while the database is slow (the snapshot's cost sets its age,
    // see QueueEstimates). Two moves on a busy machine can take half a minute.
  }, 60_000);

  it('sends keep-alive comments while nothing changes', async () => {
    const { id, gate } = await runningTask();
    const stream = await events(id);
    await stream.nextEvent();
    const comments = [];
    for (let n = 0; n < 2; n++) comments.push(await stream.next());
    expect(comments).toEqual([{ comment: 'keep-alive' }, { comment: 'keep-alive' }]);
    stream.close();
    gate.open();
  });

  it('resumes after a disconnect with Last-Event-ID: only newer events, and 204 once the final one was received', async () => {
    const { id, gate } = await runningTask();
    const first = await events(id);
    const seen = await first.nextEvent();
    first.close();

    // Reconnecting at once: nothing is newer, so nothing is sent until the task changes.
    const idle = await events(id, { 'Last-Event-ID': String(seen!.id) });
    expect(await idle.next()).toEqual({ retry: '2000' });
    expect(await idle.next()).toEqual({ comment: 'keep-alive' });
    idle.close();

    gate.progress(0.5); // while no stream is open
    await new Promise((resolve) => setTimeout(resolve, 800));
    const resumed = await events(id, { 'Last-Event-ID': String(seen!.id) });
    const newer = await resumed.nextEvent();
    expect(newer!.id).toBeGreaterThan(seen!.id);
    expect(newer!.body).toMatchObject({ status: 'PENDING', progress: 0.5 });
    resumed.close();

    gate.open();
    const again = await events(id, { 'Last-Event-ID': String(newer!.id) });
    const final = await again.nextEvent();
    expect(final!.body).toMatchObject({ status: 'SUCCESS' });
    expect(await again.nextEvent()).toBeNull();

    const after = await events(id, { 'Last-Event-ID': String(final!.id) });
    expect(after.status).toBe(204);
    const fresh = await events(id);
    expect(await fresh.nextEvent()).toEqual(final);
    expect(await fresh.nextEvent()).toBeNull();
  });

  it('ends with the cancelled status when the task is cancelled', async () => {
    const { id } = await runningTask();
    const stream = await events(id);
    await stream.nextEvent();
    expect((await gated.api.request('POST', `${T2I}/cancel/${id}`)).status).toBe(200);
    expect((await stream.nextEvent())?.body).toEqual({ status: 'FAILURE', error: CANCELLED_ERROR });
    expect(await stream.nextEvent()).toBeNull();
  });

  it("answers 404 for an unknown task, another owner's and a malformed id, like the status path", async () => {
    const id = await submit('mine');
    for (const stream of [
      await events('7d9f1c9e-2a4b-4c1d-9e8f-0a1b2c3d4e5f'),
      await events(id, {}, gated.api.bob.key),
      await events(id, {}, gated.api.bob.key, '/bgchanger/v1'),
      await events('not-a-uuid'),
    ]) {
      expect(stream.status).toBe(404);
      expect(JSON.parse(stream.text!)).toEqual({ detail: 'Task not found' });
    }
  });

  it("streams the owner's task at another pipeline's status path, as the status path answers it", async () => {
    const { id, gate } = await runningTask();
    const stream = await events(id, {}, gated.api.alice.key, '/bgchanger/v1');
    expect(stream.status).toBe(200);
    expect(await stream.next()).toEqual({ retry: '2000' });
    expect((await stream.nextEvent())?.body).toMatchObject({ status: 'PENDING' });
    gate.open();
    const final = await stream.nextEvent();
    const own = await gated.api.request('GET', `${T2I}/status/${id}`);
    expect(final?.body).toEqual(own.body);
    expect(final?.body).toMatchObject({ status: 'SUCCESS' });
    expect(await stream.nextEvent()).toBeNull();
  });

  it('holds hundreds of streams on one LISTEN connection, reads nothing while they idle, one statement per change', async () => {
    const { id, gate } = await runningTask();
    const queued = await Promise.all(Array.from({ length: 50 }, (_, n) => submit(`queued ${n}`)));
    const streams = await Promise.all([
      ...Array.from({ length: 250 }, () => events(id)),
      ...queued.map((each) => events(each)),
    ]);
    await Promise.all(streams.map((stream) => stream.nextEvent()));

    const listening = await gated.api.db.pool.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND query = 'LISTEN imagegen_task_events'`,
    );
    expect(listening.rows[0].n).toBe(1);

    const statusReads = countQueries(gated.api, 'getTaskStatusesByIds');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(statusReads.count()).toBe(0);

    // One change of the watched task: its 250 streams each get the event from a shared read.
    gate.progress(0.5);
    const changed = await Promise.all(streams.slice(0, 250).map((stream) => stream.nextEvent()));
    expect(changed.every((event) => event?.body.progress === 0.5)).toBe(true);
    expect(statusReads.count()).toBeGreaterThan(0);
    expect(statusReads.count()).toBeLessThanOrEqual(3);
    statusReads.stop();

    for (const stream of streams) stream.close();
    gate.open();
    for (const each of [id, ...queued]) await gated.api.settle(`${T2I}/status/${each}`, gated.api.alice.key);
  });
});

/** Reads a stream's events until one's body satisfies `test` (within the stream's own timeout per event). */
async function eventWhere(
  stream: Awaited<ReturnType<typeof openStream>>,
  test: (body: Record<string, unknown>) => boolean,
): Promise<{ id: number; body: Record<string, unknown> }> {
  for (;;) {
    const event = await stream.nextEvent();
    if (!event) throw new Error('the stream ended before the awaited event');
    if (test(event.body)) return event;
  }
}

/** Counts the named statements the harness's pool runs from now on (the API and its workers share it). */
function countQueries(api: ApiHarness, name: string): { count(): number; stop(): void } {
  const pool = api.db.pool;
  const original = pool.query.bind(pool);
  let count = 0;
  pool.query = ((config: unknown, ...rest: unknown[]) => {
    if ((config as { name?: string } | undefined)?.name === name) count++;
    return (original as (...args: unknown[]) => unknown)(config, ...rest);
  }) as typeof pool.query;
  return {
    count: () => count,
    stop: () => {
      pool.query = original;
    },
  };
}
