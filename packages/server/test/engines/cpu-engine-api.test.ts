import { createCpuEngine, createSafetyChecker, facePreflight } from '@imagegen/engine-cpu/engine';
import {
  channel,
  facePhoto,
  iou,
  landscape,
  photoCrop,
  productScene,
} from '@imagegen/engine-cpu/test-images';
import { createSandboxEngine } from '@imagegen/engine-sandbox/engine';
import { createEngineRegistry, type Engine } from '@imagegen/engines';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { type FileServer, type LoopbackApi, serveFiles, startLoopbackApi } from '../support/loopback.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/**
 * The cpu engine through the real API: submit, poll, download, check. A real PostgreSQL (the run's
 * cluster), the HTTP API on loopback, the queue worker, and input images served on loopback.
 */

let db: TestDatabase;
let api: LoopbackApi;
let images: FileServer;
let key: string;
let truth: Buffer;
const cpu = createCpuEngine();
const safety = createSafetyChecker();
/** When the cpu engine's last run left it (resolved or rejected), for the cancel test. */
let cpuRunEnded = Promise.resolve(0);
const watchedCpu: Engine = {
  ...cpu,
  run(job, ctx) {
    const run = cpu.run(job, ctx);
    cpuRunEnded = run.then(
      () => Date.now(),
      () => Date.now(),
    );
    return run;
  },
};

beforeAll(async () => {
  const scene = await productScene();
  truth = scene.mask;
  const png = (data: Buffer) => ['image/png', data] as const;
  images = await serveFiles({
    '/scene.png': png(scene.scene),
    '/face.png': png(await facePhoto()),
    '/hills.png': png(await landscape()),
    '/small.png': png(
      await sharp(await photoCrop())
        .resize(64, 64)
        .png()
        .toBuffer(),
    ),
    '/large.png': png(
      await sharp(await photoCrop())
        .resize(512, 512)
        .png()
        .toBuffer(),
    ),
  });
  db = await createTestDatabase();
  key = (await createOwner(db.pool, { name: 'cpu-tester', plan: 'UNLIMITED' })).apiKey;
  const engines = createEngineRegistry([watchedCpu, createSandboxEngine()], {
    enabled: ['cpu', 'sandbox'],
    pinned: {},
  });
  api = await startLoopbackApi({ pool: db.pool, engines, worker: { preflights: [facePreflight], safety } });
});

afterAll(async () => {
  await api?.close();
  await safety.close?.();
  await cpu.close?.();
  await images?.close();
  await db?.drop();
});

async function call(
  method: string,
  route: string,
  json?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${api.url}${route}`, {
    method,
    headers: { 'API-Key': key, ...(json ? { 'content-type': 'application/json' } : {}) },
    ...(json ? { body: JSON.stringify(json) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Submits, then polls the status path until the task leaves PENDING. */
async function runTask(pipeline: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const submitted = await call('POST', pipeline, body);
  expect(submitted.status).toBe(200);
  expect(submitted.body.status).toBe('PENDING');
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { status, body: state } = await call('GET', `${pipeline}/status/${submitted.body.id}`);
    expect(status).toBe(200);
    if (state.status !== 'PENDING') return state;
    if (Date.now() > deadline) throw new Error(`${pipeline} still pending after 300 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function download(state: Record<string, unknown>): Promise<Buffer> {
  const urls = state.download_urls as string[];
  expect(urls).toHaveLength(1);
  const response = await fetch(urls[0]!);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

// Real inference on a shared CPU: a first run loads its model; the engines project's 120 s budget.
describe('the cpu engine through the API', { timeout: 120_000 }, () => {
  it('removes the background of a submitted scene and serves the cut-out', async () => {
    const state = await runTask('/bgremover/v1', { init_image: `${images.url}/scene.png` });
    expect(state.status).toBe('SUCCESS');
    const png = await download(state);
    expect(await sharp(png).metadata()).toMatchObject({ width: 512, height: 512, channels: 4 });
    expect(iou(await channel(png, 3), truth)).toBeGreaterThanOrEqual(0.9);
  });

  it('upscales with superresolution to the requested factor', async () => {
    const state = await runTask('/superresolution/v1', {
      init_image: `${images.url}/small.png`,
      model_name: 'realesr-general-x4v3',
      scale_factor: 4,
      tile: 128,
    });
    expect(state.status).toBe('SUCCESS');
    expect(await sharp(await download(state)).metadata()).toMatchObject({ width: 256, height: 256 });
  });

  it('fails face_enhance with the engine error as the task error', async () => {
    const state = await runTask('/superresolution/v1', {
      init_image: `${images.url}/small.png`,
      model_name: 'RealESRGAN_x4plus',
      scale_factor: 2,
      tile: 128,
      face_enhance: true,
    });
    expect(state.status).toBe('FAILURE');
    expect(state.error).toMatch(/face_enhance needs a face-restoration model/);
  });

  it('stops a cancelled superresolution between its patches and serves nothing', async () => {
    const submitted = await call('POST', '/superresolution/v1', {
      init_image: `${images.url}/large.png`,
      model_name: 'realesr-general-x4v3',
      scale_factor: 4,
      tile: 128,
    });
    const id = String(submitted.body.id);
    // Running with its first patches done (4 × 4 patches in all).
    const deadline = Date.now() + 300_000;
    for (;;) {
      const { body } = await call('GET', `/superresolution/v1/status/${id}`);
      if (typeof body.progress === 'number' && body.progress > 0) break;
      expect(body.status).toBe('PENDING');
      if (Date.now() > deadline) throw new Error('the superresolution never reported progress');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const cancelledAt = Date.now();
    const cancelled = await call('POST', `/superresolution/v1/cancel/${id}`);
    expect(cancelled.body).toEqual({ status: 'FAILURE', error: 'cancelled by the caller' });
    // The patches still queued are dropped: the run ends at once, far before its last patch.
    const stoppedAfter = (await cpuRunEnded) - cancelledAt;
    expect(stoppedAfter).toBeLessThan(1_000);
    expect((await call('GET', `/superresolution/v1/status/${id}`)).body).toEqual(cancelled.body);
    const { rows } = await db.pool.query('SELECT 1 FROM images WHERE task_id = $1', [id]);
    expect(rows).toEqual([]);
  });

  it('fails a face swap whose face image shows a landscape before any engine runs', async () => {
    const state = await runTask('/faceswap/v1', {
      input_face: `${images.url}/hills.png`,
      input_image: `${images.url}/face.png`,
    });
    expect(state.status).toBe('FAILURE');
    expect(state.error).toBe(
      `input_face shows no face (${images.url}/hills.png); /faceswap/v1 needs a photo with a clearly visible face`,
    );
  });

  it('answers image2prompt with a tag-style description', async () => {
    const state = await runTask('/image2prompt/v1', { input_image: `${images.url}/hills.png` });
    expect(state.status).toBe('SUCCESS');
    expect(state.prompt).toMatch(/^(photo|drawing), .*blue.*landscape orientation$/);
  });

  it('passes the safety checker on a neutral output when safety_checker is set', async () => {
    const state = await runTask('/sd/text2image/v1', {
      prompt: 'a lighthouse',
      negative_prompt: '',
      width: 256,
      height: 256,
      safety_checker: true,
    });
    expect(state.status).toBe('SUCCESS');
  });
});
