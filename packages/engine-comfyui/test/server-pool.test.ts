import { EngineInputError } from '@imagegen/engines';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServerUnavailableError } from '../src/contracts.ts';
import { type ServerLease, ServerPool, type SlotRequest } from '../src/server-pool.ts';
import { type StandInClient, standInClient } from './stand-in-client.ts';

const pools: ServerPool[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

async function startPool(
  clients: StandInClient[],
  options: ConstructorParameters<typeof ServerPool>[1] = {},
) {
  const pool = new ServerPool(clients, options);
  pools.push(pool);
  await pool.start();
  return pool;
}

const request = (extra: Partial<SlotRequest> = {}): SlotRequest => ({
  signal: new AbortController().signal,
  ...extra,
});

/** Whether a promise has settled by now (after pending callbacks ran). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

const names = (leases: ServerLease[]) => leases.map((lease) => lease.client.name);

describe('the ComfyUI server pool', () => {
  it('keeps each server busy but not flooded: one running and one queued prompt of ours at most', async () => {
    const pool = await startPool([standInClient('a'), standInClient('b')]);
    expect(pool.slots).toBe(4);
    const leases = await Promise.all([1, 2, 3, 4].map(() => pool.acquire(request())));
    expect(names(leases).sort()).toEqual(['a', 'a', 'b', 'b']);
    const fifth = pool.acquire(request());
    expect(await settled(fifth)).toBe(false);
    leases.find((lease) => lease.client.name === 'b')!.release();
    expect((await fifth).client.name).toBe('b');
    expect(pool.status().map((s) => s.inFlight)).toEqual([2, 2]);
  });

  it('sends the next prompt to the server with the shortest queue, counting prompts that are not ours', async () => {
    const a = standInClient('a');
    const b = standInClient('b');
    a.queueRemaining = 3;
    const pool = await startPool([a, b]);
    expect((await pool.acquire(request())).client.name).toBe('b');
    expect((await pool.acquire(request())).client.name).toBe('b');
    expect((await pool.acquire(request())).client.name).toBe('a');
    expect(pool.status().map((s) => [s.name, s.queue])).toEqual([
      ['a', 4],
      ['b', 2],
    ]);
  });

  it('prefers, among equally short queues, the server that last ran the same checkpoint', async () => {
    const pool = await startPool([standInClient('a'), standInClient('b'), standInClient('c')]);
    const first = await pool.acquire(request({ checkpoint: 'sdxl.safetensors' }));
    const second = await pool.acquire(request({ checkpoint: 'sd15.safetensors' }));
    expect(names([first, second])).toEqual(['a', 'b']);
    first.release();
    second.release();
    // c is idle and least recently used, yet each job goes where its model is loaded.
    expect((await pool.acquire(request({ checkpoint: 'sd15.safetensors' }))).client.name).toBe('b');
    expect((await pool.acquire(request({ checkpoint: 'sdxl.safetensors' }))).client.name).toBe('a');
    // A shorter queue beats affinity: an idle server is never left idle for a reload saved.
    expect((await pool.acquire(request({ checkpoint: 'sdxl.safetensors' }))).client.name).toBe('c');
    expect(pool.status().map((s) => s.checkpoint)).toEqual([
      'sdxl.safetensors',
      'sd15.safetensors',
      'sdxl.safetensors',
    ]);
  });

  it('takes turns between servers that tie on everything', async () => {
    const pool = await startPool([standInClient('a'), standInClient('b'), standInClient('c')]);
    const order: string[] = [];
    for (let n = 0; n < 6; n++) {
      const lease = await pool.acquire(request());
      order.push(lease.client.name);
      lease.release();
    }
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('serves waiting jobs oldest first, and a job waiting for a busy group holds up no other', async () => {
    const pool = await startPool([standInClient('gpu-1'), standInClient('gpu-2')]);
    const held = await Promise.all([1, 2, 3, 4].map(() => pool.acquire(request())));
    const pinned = pool.acquire(request({ servers: ['gpu-1'] }));
    const first = pool.acquire(request());
    const second = pool.acquire(request());
    held.find((lease) => lease.client.name === 'gpu-2')!.release();
    expect((await first).client.name).toBe('gpu-2');
    expect(await settled(pinned)).toBe(false);
    expect(await settled(second)).toBe(false);
    held.find((lease) => lease.client.name === 'gpu-1')!.release();
    expect((await pinned).client.name).toBe('gpu-1');
    expect(await settled(second)).toBe(false);
  });

  it('sends a routed job only to the servers of its name, a group when the name is shared', async () => {
    const [a1, a2, b] = [standInClient('big'), standInClient('big'), standInClient('small')];
    Object.assign(a2, { url: 'http://big-2.test:8188' });
    const pool = await startPool([a1, a2, b]);
    expect(pool.names).toEqual(['big', 'small']);
    const leases = await Promise.all([1, 2, 3, 4].map(() => pool.acquire(request({ servers: ['big'] }))));
    expect(leases.map((lease) => lease.client.url).sort()).toEqual([
      'http://big-2.test:8188',
      'http://big-2.test:8188',
      'http://big.test:8188',
      'http://big.test:8188',
    ]);
    expect(await settled(pool.acquire(request({ servers: ['big'] })))).toBe(false);
    expect((await pool.acquire(request())).client.name).toBe('small');
  });

  it('refuses a job whose routing allows no server here, naming both sides', async () => {
    const pool = await startPool([standInClient('gpu-1')]);
    await expect(pool.acquire(request({ servers: ['gpu-9'] }))).rejects.toThrow(EngineInputError);
    await expect(pool.acquire(request({ servers: ['gpu-9'] }))).rejects.toThrow(
      'no ComfyUI server here may run this task: its routing allows gpu-9; the servers here are gpu-1',
    );
    await expect(pool.acquire(request({ servers: [] }))).rejects.toThrow('its routing allows none of them');
  });

  it('skips a server found dead and checks it again with a doubling backoff until it answers', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const a = standInClient('a');
    const b = standInClient('b');
    a.up = false;
    const log: string[] = [];
    const pool = await startPool([a, b], {
      backoffMs: 100,
      maxBackoffMs: 400,
      checkEveryMs: 10_000,
      log: (l) => log.push(l),
    });
    expect(pool.status().map((s) => s.state)).toEqual(['down', 'up']);
    expect(pool.status()[0]!.error).toBe('a: connection refused');
    const leases = await Promise.all([pool.acquire(request()), pool.acquire(request())]);
    expect(names(leases)).toEqual(['b', 'b']);
    expect(a.checks).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(a.checks).toBe(2);
    await vi.advanceTimersByTimeAsync(199);
    expect(a.checks).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(a.checks).toBe(3);
    await vi.advanceTimersByTimeAsync(400);
    expect(a.checks).toBe(4);
    await vi.advanceTimersByTimeAsync(400); // capped at maxBackoffMs
    expect(a.checks).toBe(5);
    const waiting = pool.acquire(request());
    a.up = true;
    await vi.advanceTimersByTimeAsync(400);
    expect((await waiting).client.name).toBe('a');
    expect(pool.status()[0]!.state).toBe('up');
    // (The stand-ins do not say what they can run: that reading fails, and is logged, apart.)
    expect(log.filter((line) => !line.includes('reading what it can run'))).toEqual([
      'ComfyUI server a (http://a.test:8188) is down: a: connection refused',
      'ComfyUI server a is up again',
    ]);
  });

  it('marks a server down when it fails mid-run, so the retry goes to another server', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const pool = await startPool([standInClient('a'), standInClient('b')], { backoffMs: 50 });
    const lease = await pool.acquire(request());
    expect(lease.client.name).toBe('a');
    (lease.client as StandInClient).up = false;
    lease.fail(new ServerUnavailableError('a: socket hang up'));
    lease.fail(new ServerUnavailableError('counted once'));
    expect(pool.status()[0]).toMatchObject({ state: 'down', inFlight: 0, error: 'a: socket hang up' });
    const retry = await pool.acquire(request());
    expect(retry.client.name).toBe('b');
    (lease.client as StandInClient).up = true;
    await vi.advanceTimersByTimeAsync(50);
    expect(pool.status()[0]!.state).toBe('up');
  });

  it('holds a job while every server it may use is down, and fails its attempt after downWaitMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const a = standInClient('a');
    const b = standInClient('b');
    a.up = false;
    b.up = false;
    const pool = await startPool([a, b], { backoffMs: 1_000, maxBackoffMs: 1_000, downWaitMs: 2_500 });
    const comesBack = pool.acquire(request({ servers: ['a'] }));
    const givesUp = pool.acquire(request({ servers: ['b'] }));
    givesUp.catch(() => {});
    a.up = true;
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await comesBack).client.name).toBe('a');
    await vi.advanceTimersByTimeAsync(1_500);
    await expect(givesUp).rejects.toThrow(ServerUnavailableError);
    await expect(givesUp).rejects.toThrow('no ComfyUI server is reachable: b (b: connection refused)');
  });

  it('forgets a waiting job whose task is aborted', async () => {
    const pool = await startPool([standInClient('a')]);
    const held = await Promise.all([pool.acquire(request()), pool.acquire(request())]);
    const controller = new AbortController();
    const aborted = pool.acquire(request({ signal: controller.signal }));
    const next = pool.acquire(request());
    controller.abort(new Error('task cancelled'));
    await expect(aborted).rejects.toThrow('task cancelled');
    held[0]!.release();
    expect((await next).client.name).toBe('a');
    expect(pool.status()[0]!.inFlight).toBe(2);
  });

  it('frees a slot once however often it is given back, and still hears of a failure after release', async () => {
    const pool = await startPool([standInClient('a')]);
    const lease = await pool.acquire(request());
    lease.release();
    lease.release();
    expect(pool.status()[0]).toMatchObject({ state: 'up', inFlight: 0 });
    lease.fail(new ServerUnavailableError('a: died while we downloaded its outputs'));
    expect(pool.status()[0]).toMatchObject({ state: 'down', inFlight: 0 });
  });
});
