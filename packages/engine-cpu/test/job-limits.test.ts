import os from 'node:os';
import { EngineInputError, type InputImage, inMemoryImage } from '@imagegen/engines';
import sharp from 'sharp';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createCpuEngine } from '../src/engine-api.ts';
import { InferencePool } from '../src/inference-pool.ts';
import { DEFAULT_MAX_OUTPUT_PIXELS, parseMaxOutputPixels } from '../src/output-pixels.ts';
import { context, inputImage, job, photoCrop } from './support/fixtures.ts';

const engine = createCpuEngine({ preload: [] });
afterAll(() => engine.close?.());

/** An image of the claimed size whose bytes must never be read (the job fails before). */
function unread(width: number, height: number): InputImage {
  return {
    contentType: 'image/png',
    width,
    height,
    size: 143_000,
    url: 'https://images.example/large.png',
    read: () => Promise.reject(new Error('the image was read')),
  };
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => new Error('expected the job to fail'),
    (e: unknown) => e as Error,
  );
  expect(error).toBeInstanceOf(EngineInputError);
  return error;
}

describe('what one cpu job may make', () => {
  it('fails a superresolution that would make more than 4096 × 4096 at once, before reading its image', async () => {
    const started = performance.now();
    const error = await failure(
      engine.run(
        job(
          '/superresolution/v1',
          { model_name: 'RealESRGAN_x4plus', scale_factor: 4, tile: 256 },
          { init_image: unread(7000, 7000) },
        ),
        context(),
      ),
    );
    expect(error.message).toBe(
      'init_image: 7000×7000 at scale 4 makes 28000×28000 (784 MP), above the 16.8 MP the cpu engine makes (IMAGEGEN_CPU_MAX_OUTPUT_PIXELS)',
    );
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('counts what the model makes at its native scale, and bounds the upscaler and the background remover', async () => {
    const small = createCpuEngine({ preload: [], maxOutputPixels: 100 * 100 });
    try {
      // 40 × 40 at 2.5 runs the x3 model: 120 × 120 is made, then resized.
      const superresolution = await failure(
        small.run(
          job(
            '/superresolution/v1',
            { model_name: 'realesr-general-x4v3', scale_factor: 2.5, tile: 128 },
            { init_image: unread(40, 40) },
          ),
          context(),
        ),
      );
      expect(superresolution.message).toMatch(
        /^init_image: 40×40 at scale 3 makes 120×120 \(14400 pixels\), above the 10000 pixels/,
      );
      const upscaler = await failure(
        small.run(job('/upscaler/v1', { type: 'deblur' }, { input_image: unread(60, 60) }), context()),
      );
      expect(upscaler.message).toMatch(/^input_image: 60×60 at scale 2 makes 120×120/);
      const removal = await failure(
        small.run(job('/bgremover/v1', {}, { init_image: unread(101, 100) }), context()),
      );
      expect(removal.message).toMatch(/^init_image: 101×100 makes 101×100/);
    } finally {
      await small.close?.();
    }
  });

  it('reads IMAGEGEN_CPU_MAX_OUTPUT_PIXELS, and refuses a value it cannot read', () => {
    expect(parseMaxOutputPixels(undefined)).toBe(DEFAULT_MAX_OUTPUT_PIXELS);
    expect(parseMaxOutputPixels('')).toBe(4096 * 4096);
    expect(parseMaxOutputPixels('25000000')).toBe(25_000_000);
    for (const wrong of ['0', '-5', '4k', '1.5']) {
      expect(() => parseMaxOutputPixels(wrong)).toThrow(
        `IMAGEGEN_CPU_MAX_OUTPUT_PIXELS must be a whole number of pixels, not "${wrong}"`,
      );
    }
  });
});

describe('what the cpu engine takes at once', () => {
  const threads = process.env.IMAGEGEN_CPU_THREADS;
  afterEach(() => {
    if (threads === undefined) delete process.env.IMAGEGEN_CPU_THREADS;
    else process.env.IMAGEGEN_CPU_THREADS = threads;
  });

  it('declares as many jobs at once as it has inference threads: one per core, or IMAGEGEN_CPU_THREADS', () => {
    delete process.env.IMAGEGEN_CPU_THREADS;
    expect(createCpuEngine({ preload: [] }).capacity).toBe(os.availableParallelism());
    process.env.IMAGEGEN_CPU_THREADS = '3';
    expect(createCpuEngine({ preload: [] }).capacity).toBe(3);
  });
});

describe('progress', () => {
  it('reports only work done: nothing before its image is decoded, then each step as it ends', async () => {
    const data = await sharp(await photoCrop())
      .resize(96, 64)
      .png()
      .toBuffer();
    const facts = await inputImage(data);
    let read = false;
    const slow: InputImage = {
      ...facts,
      read: async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        read = true;
        return facts.read();
      },
    };
    const fractions: { fraction: number; read: boolean }[] = [];
    await engine.run(
      job(
        '/superresolution/v1',
        { model_name: 'realesr-general-x4v3', scale_factor: 4, tile: 128 },
        { init_image: slow },
      ),
      { signal: new AbortController().signal, progress: (fraction) => fractions.push({ fraction, read }) },
    );
    expect(fractions.every((report) => report.read)).toBe(true);
    const values = fractions.map((report) => report.fraction);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    // Decoding is a sliver of an upscaling's work, the model passes almost all of it.
    expect(values[0]).toBeLessThan(0.01);
    expect(values.at(-2)).toBeGreaterThan(0.9);
    expect(values.at(-1)).toBe(1);
  });
});

describe('failures', () => {
  it('names the field, never the decoder, when an image does not decode', async () => {
    const data = await sharp(await photoCrop())
      .png()
      .toBuffer();
    const truncated = inMemoryImage(data.subarray(0, Math.floor(data.length / 2)), {
      contentType: 'image/png',
      width: 256,
      height: 256,
      url: 'x',
    });
    const error = await failure(engine.run(job('/bgremover/v1', {}, { init_image: truncated }), context()));
    expect(error.message).toBe(
      'init_image: the image could not be decoded (the file is truncated or corrupt)',
    );
  });

  it('stops an upscaling within a second when its signal aborts, and runs the next job', async () => {
    const data = await sharp(await photoCrop())
      .resize(384, 384)
      .png()
      .toBuffer();
    const controller = new AbortController();
    let abortedAt = 0;
    const running = engine.run(
      job(
        '/superresolution/v1',
        { model_name: 'realesr-general-x4v3', scale_factor: 4, tile: 128 },
        { init_image: await inputImage(data) },
      ),
      {
        signal: controller.signal,
        progress: (fraction) => {
          // Aborted once its first patches are done: the others are queued or on the threads.
          if (fraction > 0.01 && !abortedAt) {
            abortedAt = performance.now();
            controller.abort(new Error('cancelled'));
          }
        },
      },
    );
    await expect(running).rejects.toThrow();
    expect(abortedAt).toBeGreaterThan(0);
    expect(performance.now() - abortedAt).toBeLessThan(1_000);
    const next = await engine.run(
      job(
        '/superresolution/v1',
        { model_name: 'realesr-general-x4v3', scale_factor: 2, tile: 128 },
        { init_image: await inputImage(await sharp(data).resize(32, 32).png().toBuffer()) },
      ),
      context(),
    );
    expect(next.images[0]).toMatchObject({ width: 64, height: 64 });
  });
});

describe('the inference pool', () => {
  it('lets a caller stop waiting for a job on its thread at once, and for one in its queue', async () => {
    const pool = new InferencePool(1);
    try {
      const blank = { data: new Uint8Array(224 * 224 * 3), width: 224, height: 224 };
      const first = new AbortController();
      const second = new AbortController();
      // The first job loads nsfwjs on the one thread (seconds); the second waits behind it.
      const running = pool.run('nsfw', { image: blank }, { signal: first.signal });
      const queued = pool.run('nsfw', { image: blank }, { signal: second.signal });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stopped = performance.now();
      first.abort();
      second.abort();
      await expect(running).rejects.toThrow('aborted');
      await expect(queued).rejects.toThrow('aborted');
      expect(performance.now() - stopped).toBeLessThan(1_000);
      // The pass went on on its thread; the pool answers the next job.
      expect(await pool.run('nsfw', { image: blank })).toHaveProperty('Neutral');
    } finally {
      await pool.close();
    }
  });
});
