import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { createPool } from '@imagegen/db';
import {
  createCpuEngine,
  createSafetyChecker,
  esrganModelJson,
  facePreflight,
  tfjs,
} from '@imagegen/engine-cpu/engine';
import { facePhoto, photoCrop, productScene } from '@imagegen/engine-cpu/test-images';
import { createEngineRegistry, type EngineJob, type InputImage, inMemoryImage } from '@imagegen/engines';
import { createOwner, migrate } from '@imagegen/server';
import { type LoopbackApi, serveFiles, startLoopbackApi } from '@imagegen/server/testing';
import { removeBackground as imglyRemoveBackground } from '@imgly/background-removal-node';
import sharp from 'sharp';
import { benchDatabase } from './bench-database.ts';
import { percentile } from './percentile.ts';

const note = (line: string) => console.error(`[bench engines] ${line}`);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** The patch size both upscalers use (the spec's largest `tile`). */
const TILE = 256;
const ctx = () => ({ signal: new AbortController().signal, progress: () => {} });
const ms = (n: number) => Math.round(n);
const ratio = (wrapper: number, ours: number) => Math.round((wrapper / ours) * 100) / 100;

async function median(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

async function input(data: Buffer, url = 'https://bench.example/in.png'): Promise<InputImage> {
  const meta = await sharp(data).metadata();
  return inMemoryImage(data, { contentType: 'image/png', width: meta.width!, height: meta.height!, url });
}

const job = (pipeline: string, values: Record<string, unknown>, images: EngineJob['images']): EngineJob => ({
  pipeline,
  input: values,
  images,
  seed: 1,
});

/** UpscalerJS's own upscale(), given the same ESRGAN weights through a file:// model path. */
async function upscalerJs(scale: 4): Promise<(image: Buffer) => Promise<unknown>> {
  const tf = await tfjs();
  const { default: Upscaler } = (await import('upscaler')) as unknown as {
    default: new (options: object) => { upscale(input: unknown, options: object): Promise<unknown> };
  };
  const upscaler = new Upscaler({
    model: { path: pathToFileURL(esrganModelJson('slim', scale)).href, scale, modelType: 'layers' },
  });
  return async (image: Buffer) => {
    const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const tensor = tf.tensor3d(Int32Array.from(data), [info.height, info.width, 3], 'int32');
    const out = (await upscaler.upscale(tensor, { output: 'tensor', patchSize: TILE, padding: 12 })) as {
      dispose(): void;
    };
    out.dispose();
    tensor.dispose();
  };
}

async function capabilities(): Promise<Record<string, unknown>> {
  const engine = createCpuEngine({ preload: ['isnet-medium', 'esrgan-slim-x4'] });
  await engine.start?.();
  const safety = createSafetyChecker();
  const figures: Record<string, unknown> = {};
  try {
    for (const size of [512, 1024]) {
      const scene = (await productScene(size, size)).scene;
      note(`background removal ${size}`);
      const image = await input(scene);
      const oursMs = await median(() => engine.run(job('/bgremover/v1', {}, { init_image: image }), ctx()));
      const imglyMs = await median(() =>
        imglyRemoveBackground(new Blob([new Uint8Array(scene)], { type: 'image/png' }), {
          model: 'medium',
          output: { format: 'image/png' },
        }),
      );
      figures[`bgremover_${size}_ms`] = ms(oursMs);
      figures[`bgremover_${size}_imgly_ms`] = ms(imglyMs);
      figures[`bgremover_${size}_speedup_vs_imgly`] = ratio(imglyMs, oursMs);
    }

    const wrapper = await upscalerJs(4);
    for (const size of [512, 1024]) {
      note(`upscaling x4 to ${size}`);
      const small = await sharp(await photoCrop())
        .resize(size / 4, size / 4)
        .png()
        .toBuffer();
      const image = await input(small);
      const oursMs = await median(() =>
        engine.run(
          job(
            '/superresolution/v1',
            { model_name: 'realesr-general-x4v3', scale_factor: 4, tile: TILE },
            { init_image: image },
          ),
          ctx(),
        ),
      );
      const wrapperMs = await median(() => wrapper(small));
      figures[`esrgan_slim_x4_to_${size}_ms`] = ms(oursMs);
      figures[`esrgan_slim_x4_to_${size}_upscalerjs_ms`] = ms(wrapperMs);
      figures[`esrgan_slim_x4_to_${size}_speedup_vs_upscalerjs`] = ratio(wrapperMs, oursMs);
    }

    const face = await facePhoto();
    for (const size of [512, 1024]) {
      note(`nsfw and faces ${size}`);
      const picture = await sharp(face).resize(size, size, { fit: 'fill' }).png().toBuffer();
      figures[`nsfw_${size}_ms`] = ms(
        await median(() =>
          safety.classify(
            { data: picture, contentType: 'image/png', width: size, height: size },
            ctx().signal,
          ),
        ),
      );
      const faceImage = await input(picture);
      figures[`faces_${size}_ms`] = ms(
        await median(() =>
          facePreflight.check(job('/instamodel/v1', {}, { input_face: faceImage }), ctx().signal),
        ),
      );
    }
  } finally {
    await safety.close?.();
    await engine.close?.();
  }
  return figures;
}

/** GET status latency from 4 pollers, idle and then while the engine removes backgrounds. */
async function statusWhileBusy(): Promise<Record<string, unknown>> {
  const db = await benchDatabase('bench_engines');
  const pool = createPool(db.url, { max: 10, applicationName: 'bench-engines' });
  const scene = (await productScene(1024, 1024)).scene;
  const images = await serveFiles({ '/scene.png': ['image/png', scene] });
  const imageUrl = `${images.url}/scene.png`;
  const cpu = createCpuEngine();
  const engines = createEngineRegistry([cpu], { enabled: ['cpu'], pinned: {} });
  let api: LoopbackApi | undefined;
  try {
    await migrate(pool);
    const { apiKey } = await createOwner(pool, { name: 'bench', plan: 'UNLIMITED' });
    api = await startLoopbackApi({ pool, engines, worker: { concurrency: os.availableParallelism() } });
    const { url } = api;
    const headers = { 'API-Key': apiKey, 'content-type': 'application/json' };
    const submit = async () => {
      const response = await fetch(`${url}/bgremover/v1`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ init_image: imageUrl }),
      });
      return ((await response.json()) as { id: string }).id;
    };
    const status = async (id: string) => {
      const start = performance.now();
      const response = await fetch(`${url}/bgremover/v1/status/${id}`, { headers });
      const body = (await response.json()) as { status: string };
      return { ms: performance.now() - start, status: body.status };
    };
    const poll = async (ids: string[], until: () => boolean, latencies: number[]) => {
      await Promise.all(
        Array.from({ length: 4 }, async (_, n) => {
          while (!until()) {
            latencies.push((await status(ids[n % ids.length]!)).ms);
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
        }),
      );
    };

    await engines.start();
    const warmId = await submit();
    while ((await status(warmId)).status === 'PENDING') await new Promise((r) => setTimeout(r, 100));

    note('status latency, idle');
    const idle: number[] = [];
    const idleEnd = performance.now() + 3000;
    await poll([warmId], () => performance.now() > idleEnd, idle);

    note('status latency, engine busy with 6 background removals at 1024 px');
    const ids = await Promise.all(Array.from({ length: 6 }, submit));
    const busy: number[] = [];
    let done = false;
    const watcher = (async () => {
      for (;;) {
        const states = await Promise.all(ids.map(async (id) => (await status(id)).status));
        if (states.every((s) => s !== 'PENDING')) {
          done = true;
          return states;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const started = performance.now();
    await poll(ids, () => done, busy);
    const states = await watcher;
    const busyMs = performance.now() - started;
    await api.close();
    api = undefined;
    return {
      api_status_idle_p50_ms: Math.round(percentile(idle, 50) * 10) / 10,
      api_status_idle_p99_ms: Math.round(percentile(idle, 99) * 10) / 10,
      api_status_busy_p50_ms: Math.round(percentile(busy, 50) * 10) / 10,
      api_status_busy_p99_ms: Math.round(percentile(busy, 99) * 10) / 10,
      api_status_busy_samples: busy.length,
      api_busy_tasks_succeeded: states.filter((s) => s === 'SUCCESS').length,
      api_busy_tasks: ids.length,
      api_busy_seconds: Math.round(busyMs / 100) / 10,
    };
  } finally {
    await api?.close();
    await engines.close();
    await images.close();
    await pool.end();
    await db.cleanup();
  }
}

export default async function main(): Promise<Record<string, unknown>> {
  note(`${os.availableParallelism()} cores, ${RUNS} timed runs per figure (median)`);
  const figures = {
    cores: os.availableParallelism(),
    ...(await capabilities()),
    ...(await statusWhileBusy()),
  };
  const targets = {
    target_bgremover_2x_imgly: (figures as Record<string, number>).bgremover_512_speedup_vs_imgly! >= 2,
    target_esrgan_slim_x4_1024_within_1s:
      (figures as Record<string, number>).esrgan_slim_x4_to_1024_ms! <= 1000,
    target_api_status_p99_under_20ms: (figures as Record<string, number>).api_status_busy_p99_ms! < 20,
  };
  const result = { ...figures, ...targets };
  console.log(JSON.stringify(result));
  return result;
}
