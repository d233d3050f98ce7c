/**
 * The real API for the client's tests, as `npm start` wires it: a test database, the sandbox
 * engine (placeholder images, with simulated work and progress when `delayMs` is set, previews
 * with `previews`), one in-process worker, an owner with a key, and a loopback server of input
 * images.
 */

import { createSandboxEngine } from '@imagegen/engine-sandbox/engine';
import { createEngineRegistry, type Engine } from '@imagegen/engines';
import { createOwner, enqueueWebhook } from '@imagegen/server';
import {
  createTestDatabase,
  type FileServer,
  type LoopbackApi,
  serveFiles,
  startLoopbackApi,
  type TestDatabase,
} from '@imagegen/server/testing';
import sharp from 'sharp';

export interface TestApi {
  readonly url: string;
  readonly key: string;
  /** Serves /photo.png (96×64 PNG); anything else answers 404. */
  readonly imagesUrl: string;
  readonly db: TestDatabase;
  /** The bytes of /photo.png. */
  readonly photo: Buffer;
  close(): Promise<void>;
}

export interface TestApiOptions {
  /** Simulated work per task, spread over its samples (default none: tasks end at once). */
  readonly delayMs?: number;
  /** Write webhook deliveries to the outbox (a dispatcher started by the test delivers them). */
  readonly webhooks?: boolean;
  /** false: no worker, so tasks stay queued (default true). */
  readonly worker?: boolean;
  /**
   * The engine sends a preview (a 16 × 8 JPEG) with each progress report, as the comfyui engine
   * does for a ComfyUI started with a preview method (the API's own tests run that one).
   */
  readonly previews?: boolean;
}

/** `engine`, sending a small JPEG preview each time it reports progress. */
async function withPreviews(engine: Engine): Promise<Engine> {
  const data = await sharp({ create: { width: 16, height: 8, channels: 3, background: '#c07030' } })
    .jpeg()
    .toBuffer();
  return {
    ...engine,
    run: (job, ctx) =>
      engine.run(job, {
        ...ctx,
        progress(fraction, message) {
          ctx.progress(fraction, message);
          ctx.preview?.({ data, contentType: 'image/jpeg' });
        },
      }),
  };
}

export async function startTestApi(options: TestApiOptions = {}): Promise<TestApi> {
  const db = await createTestDatabase();
  const { apiKey } = await createOwner(db.pool, { name: 'client-tests', plan: 'UNLIMITED' });
  const photo = await sharp({ create: { width: 96, height: 64, channels: 3, background: '#3070c0' } })
    .png()
    .toBuffer();
  const images: FileServer = await serveFiles({ '/photo.png': ['image/png', photo] });
  const sandbox = createSandboxEngine(options.delayMs ? { delayMs: options.delayMs } : {});
  const engine = options.previews ? await withPreviews(sandbox) : sandbox;
  const engines = createEngineRegistry([engine], { enabled: [engine.name], pinned: {} });
  const api: LoopbackApi = await startLoopbackApi({
    pool: db.pool,
    engines,
    worker: { pollMs: 100 },
    withWorker: options.worker !== false,
    ...(options.webhooks ? { enqueueWebhook } : {}),
  });
  return {
    url: api.url,
    key: apiKey,
    imagesUrl: images.url,
    db,
    photo,
    async close() {
      await api.close();
      await images.close();
      await db.drop();
    },
  };
}
