import { afterEach, describe, expect, it } from 'vitest';
import { createCpuEngine } from '../src/cpu-engine.ts';
import { acquirePool, InferencePool, releasePool } from '../src/inference-pool.ts';
import { CPU_MODELS, DEFAULT_KEEP_ALIVE_MS, parseKeepAlive, parsePreload } from '../src/models.ts';

const blank = (side = 64) => ({ data: new Uint8Array(side * side * 3), width: side, height: side });

describe('InferencePool.close', () => {
  it('lets the running job finish and rejects the queued ones, instead of stopping onnxruntime mid-run', async () => {
    // Stopping a thread inside onnxruntime's run aborted the whole process ("terminate called
    // after throwing an instance of 'Napi::Error'"): this test's process would not survive it.
    const pool = new InferencePool(1);
    const running = pool.run('isnet-mask', { image: blank() });
    const queued = pool.run('isnet-mask', { image: blank() });
    const queuedOutcome = queued.then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await pool.close();
    const mask = await running;
    expect(mask).toMatchObject({ width: 64, height: 64 });
    expect(await queuedOutcome).toBe('the inference pool is closed');
    await expect(pool.run('load', { models: [] })).rejects.toThrow('the inference pool is closed');
    // The first run loads ISNet too: on a busy machine that took over 30 s.
  }, 150_000);
});

describe('loading models on first use', () => {
  let pool: InferencePool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('starts no thread and loads no model until a job needs one, then loads only that model', async () => {
    pool = new InferencePool(2);
    expect(pool.loads()).toEqual([]);
    await pool.run('nsfw', { image: blank(224) });
    expect(pool.loads()).toEqual([['nsfw']]);
  });

  it('loads a model once per thread when first jobs arrive together, on every thread they need', async () => {
    pool = new InferencePool(2);
    await Promise.all(Array.from({ length: 4 }, () => pool!.run('nsfw', { image: blank(224) })));
    expect(pool.loads()).toEqual([['nsfw'], ['nsfw']]);
  });

  it('keeps ISNet on one thread: concurrent first removals load it once and queue for that thread', async () => {
    pool = new InferencePool(2);
    const masks = await Promise.all([
      pool.run('isnet-mask', { image: blank() }),
      pool.run('isnet-mask', { image: blank() }),
      pool.run('nsfw', { image: blank(224) }),
    ]);
    expect(masks[0]).toMatchObject({ width: 64, height: 64 });
    const isnet = pool
      .loads()
      .flat()
      .filter((model) => model === 'isnet-medium');
    expect(isnet).toEqual(['isnet-medium']);
  }, 60_000);

  it('preloads each named model on as many threads as may run it, before any job', async () => {
    pool = new InferencePool(2);
    await pool.preload(['nsfw', 'isnet-medium']);
    const loads = pool.loads().map((models) => [...models].sort());
    expect(loads).toEqual([['isnet-medium', 'nsfw'], ['nsfw']]);
    // A job for a preloaded model goes to a thread that holds it: nothing loads again.
    await pool.run('isnet-mask', { image: blank() });
    expect(pool.loads().flat().sort()).toEqual(['isnet-medium', 'nsfw', 'nsfw']);
  }, 60_000);
});

describe('the keep-alive period', () => {
  let pool: InferencePool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  const settled = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('stops a thread idle for the period, and the next job loads its model again on a new one', async () => {
    pool = new InferencePool(1, 300);
    await pool.run('nsfw', { image: blank(224) });
    expect(pool.loads()).toEqual([['nsfw']]);
    await settled(700);
    expect(pool.loads()).toEqual([]);
    await pool.run('nsfw', { image: blank(224) });
    expect(pool.loads()).toEqual([['nsfw']]);
  }, 60_000);

  it('stops a thread that a large upscaling grew soon after its job, and keeps one small jobs used', async () => {
    pool = new InferencePool(1, 120_000);
    // A patch of the largest tile at x4 grows the thread's WASM memory past 500 MB, for good.
    await pool.run('esrgan-patch', { image: blank(280), size: 'slim', scale: 4 });
    expect(pool.heaps()[0]).toBeGreaterThan(256 * 1024 * 1024);
    const grown = Date.now();
    while (pool.loads().length > 0) {
      expect(Date.now() - grown, 'the grown thread still runs').toBeLessThan(30_000);
      await settled(100);
    }
    // Small patches leave the thread small: it keeps its model for the keep-alive period.
    await pool.run('esrgan-patch', { image: blank(64), size: 'slim', scale: 4 });
    expect(pool.heaps()[0]).toBeLessThan(256 * 1024 * 1024);
    await settled(12_000);
    expect(pool.loads()).toEqual([['esrgan-slim-x4']]);
  }, 120_000);

  it('keeps a thread that gets a job within the period', async () => {
    pool = new InferencePool(1, 1_500);
    await pool.run('nsfw', { image: blank(224) });
    await settled(300);
    await pool.run('nsfw', { image: blank(224) });
    // One load: the second job found the model on the thread the first left.
    expect(pool.loads()).toEqual([['nsfw']]);
  }, 60_000);

  it('reads milliseconds, -1 to keep, 5 minutes when unset, and refuses anything else', () => {
    expect(parseKeepAlive(undefined)).toBe(DEFAULT_KEEP_ALIVE_MS);
    expect(DEFAULT_KEEP_ALIVE_MS).toBe(300_000);
    expect(parseKeepAlive(' 0 ')).toBe(0);
    expect(parseKeepAlive('60000')).toBe(60_000);
    expect(parseKeepAlive('-1')).toBe(Number.POSITIVE_INFINITY);
    for (const wrong of ['5m', '-5', '1.5', 'forever']) {
      expect(() => parseKeepAlive(wrong)).toThrow(/IMAGEGEN_CPU_KEEP_ALIVE_MS must be a whole number/);
    }
  });

  it('makes createCpuEngine() fail at once on a value it cannot read', () => {
    const saved = process.env.IMAGEGEN_CPU_KEEP_ALIVE_MS;
    process.env.IMAGEGEN_CPU_KEEP_ALIVE_MS = '5m';
    try {
      expect(() => createCpuEngine({ preload: [] })).toThrow(/IMAGEGEN_CPU_KEEP_ALIVE_MS must be/);
    } finally {
      if (saved === undefined) delete process.env.IMAGEGEN_CPU_KEEP_ALIVE_MS;
      else process.env.IMAGEGEN_CPU_KEEP_ALIVE_MS = saved;
    }
  });
});

describe('IMAGEGEN_CPU_PRELOAD', () => {
  const saved = process.env.IMAGEGEN_CPU_PRELOAD;
  afterEach(() => {
    if (saved === undefined) delete process.env.IMAGEGEN_CPU_PRELOAD;
    else process.env.IMAGEGEN_CPU_PRELOAD = saved;
  });

  it('reads model names or `all`, and refuses unknown names', () => {
    expect(parsePreload(undefined)).toEqual([]);
    expect(parsePreload(' ')).toEqual([]);
    expect(parsePreload('nsfw, esrgan-slim-x4,nsfw')).toEqual(['nsfw', 'esrgan-slim-x4']);
    expect(parsePreload('all')).toEqual(CPU_MODELS);
    expect(CPU_MODELS).toEqual(expect.arrayContaining(['isnet-medium', 'esrgan-medium-x2', 'human']));
    expect(() => parsePreload('nsfw,isnet-large')).toThrow(
      'IMAGEGEN_CPU_PRELOAD names unknown model isnet-large',
    );
  });

  it('leaves the engine with no thread after start() when unset, and loads what it names when set', async () => {
    delete process.env.IMAGEGEN_CPU_PRELOAD;
    const lazy = createCpuEngine();
    await lazy.start?.();
    const shared = acquirePool();
    try {
      expect(shared.loads()).toEqual([]);
    } finally {
      await releasePool(shared);
      await lazy.close?.();
    }

    process.env.IMAGEGEN_CPU_PRELOAD = 'nsfw';
    const eager = createCpuEngine();
    await eager.start?.();
    const pool = acquirePool();
    try {
      expect(pool.loads()).toHaveLength(pool.size);
      for (const models of pool.loads()) expect(models).toEqual(['nsfw']);
    } finally {
      await releasePool(pool);
      await eager.close?.();
    }
  });

  it('makes createCpuEngine() fail at once on a name it does not know', () => {
    process.env.IMAGEGEN_CPU_PRELOAD = 'isnet-large';
    expect(() => createCpuEngine()).toThrow('IMAGEGEN_CPU_PRELOAD names unknown model isnet-large');
  });
});
