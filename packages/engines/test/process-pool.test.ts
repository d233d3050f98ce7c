import { afterEach, describe, expect, it } from 'vitest';
import { ChildStoppedError, ChildTimeoutError, ProcessPool } from '../src/threads/process-pool.ts';
import type { TestChildRequest } from './support/test-child.ts';

const CHILD = new URL('./support/test-child.ts', import.meta.url);
const pools: ProcessPool<TestChildRequest, unknown>[] = [];

function pool(
  options: {
    size?: number;
    idleMs?: number;
    warm?: number;
    retire?: (request: TestChildRequest) => boolean;
  } = {},
) {
  const created = new ProcessPool<TestChildRequest, unknown>(CHILD, {
    size: options.size ?? 1,
    idleMs: options.idleMs ?? 60_000,
    ...(options.warm !== undefined ? { warm: options.warm } : {}),
    ...(options.retire ? { retire: options.retire } : {}),
  });
  pools.push(created);
  return created;
}

/** Whether a process with this pid still runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function eventually(check: () => boolean, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); ) {
    if (Date.now() > deadline) throw new Error(`not so within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('the process pool', () => {
  it('runs a request in a child process of its own, which stays for the next one', async () => {
    const children = pool();
    const pid = (await children.run({ op: 'pid' })) as number;
    expect(pid).not.toBe(process.pid);
    expect(await children.run({ op: 'pid' })).toBe(pid);
    // Buffers travel whole (the channel's advanced serialization).
    expect(await children.run({ op: 'echo', bytes: new Uint8Array(3_000_000) })).toBe(3_000_000);
  });

  it('answers a thrown error as a rejection with its message, and the child lives on', async () => {
    const children = pool();
    const pid = (await children.run({ op: 'pid' })) as number;
    await expect(children.run({ op: 'fail' })).rejects.toThrow('it failed on purpose');
    expect(await children.run({ op: 'pid' })).toBe(pid);
  });

  it('stops a request whose signal aborts while it runs: its child is killed at once', async () => {
    const children = pool();
    const pid = (await children.run({ op: 'pid' })) as number;
    const controller = new AbortController();
    const running = children.run({ op: 'hang' }, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stopped = performance.now();
    controller.abort(new Error('the task was cancelled'));
    await expect(running).rejects.toThrow('the task was cancelled');
    // The rejection does not wait for the child: it is the abort's own turn of the event loop.
    expect(performance.now() - stopped).toBeLessThan(1_000);
    await eventually(() => !alive(pid));
    // The next request gets a fresh child.
    expect(await children.run({ op: 'pid' })).not.toBe(pid);
  });

  it('drops a request whose signal aborts while it waits for a child', async () => {
    const children = pool();
    const busy = children.run({ op: 'sleep', ms: 500 });
    const controller = new AbortController();
    const waiting = children.run({ op: 'pid' }, { signal: controller.signal });
    controller.abort(new Error('not needed any more'));
    await expect(waiting).rejects.toThrow('not needed any more');
    // The request ahead of it was not disturbed.
    expect(typeof (await busy)).toBe('number');
  });

  it('kills a child whose request runs past its time, and says so', async () => {
    const children = pool();
    const pid = (await children.run({ op: 'pid' })) as number;
    const error = await children.run({ op: 'hang' }, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChildTimeoutError);
    await eventually(() => !alive(pid));
  });

  it('fails the request of a child that dies under it, and starts another for the next', async () => {
    const children = pool();
    const error = await children.run({ op: 'exit' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChildStoppedError);
    expect((error as Error).message).toBe('the worker process stopped (exit code 3)');
    expect(typeof (await children.run({ op: 'pid' }))).toBe('number');
  });

  it('runs as many children at once as its size, and queues the rest', async () => {
    const children = pool({ size: 2 });
    const pids = (await Promise.all(
      [1, 2, 3, 4].map(() => children.run({ op: 'sleep', ms: 200 })),
    )) as number[];
    expect(new Set(pids).size).toBe(2);
  });

  it('lets an idle child go after its idle time, and with it the memory it held', async () => {
    const children = pool({ idleMs: 200 });
    const pid = (await children.run({ op: 'pid' })) as number;
    expect(children.size).toBe(1);
    await eventually(() => children.size === 0 && !alive(pid));
  });

  it('starts a warm child ahead, and keeps it past its idle time', async () => {
    const children = pool({ idleMs: 100, warm: 1 });
    children.warmUp();
    expect(children.size).toBe(1);
    const pid = (await children.run({ op: 'pid' })) as number;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(children.size).toBe(1);
    expect(await children.run({ op: 'pid' })).toBe(pid);
  });

  it('sends a child away once it answered a request it retires, and warms another', async () => {
    const children = pool({ warm: 1, retire: (request) => request.op === 'echo' });
    const pid = (await children.run({ op: 'pid' })) as number;
    expect(await children.run({ op: 'echo', bytes: new Uint8Array(10) })).toBe(10);
    await eventually(() => !alive(pid));
    expect(children.size).toBe(1);
    expect(await children.run({ op: 'pid' })).not.toBe(pid);
  });
});
