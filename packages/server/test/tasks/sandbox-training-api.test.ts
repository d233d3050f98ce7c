import { endpointByPath } from '@imagegen/contract';
import { cpuEngineModule } from '@imagegen/engine-cpu';
import { sandboxEngineModule } from '@imagegen/engine-sandbox';
import { SANDBOX_MODEL_NOTE } from '@imagegen/engine-sandbox/engine';
import { setUpEngines } from '@imagegen/engines';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { type FileServer, type LoopbackApi, serveFiles, startLoopbackApi } from '../support/loopback.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/**
 * `/train_model/v1` on the engines `npm start` sets up: the sandbox engine answers it over the real
 * API, queue worker and PostgreSQL, walking through the training states to a model that says it
 * is a sandbox model.
 */

let db: TestDatabase;
let api: LoopbackApi;
let images: FileServer;
let imagesUrl: string;
let key: string;

beforeAll(async () => {
  const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#8a6' } })
    .png()
    .toBuffer();
  images = await serveFiles(
    Object.fromEntries([1, 2].map((n) => [`/me-${n}.png`, ['image/png', png] as const])),
  );
  imagesUrl = images.url;
  db = await createTestDatabase();
  key = (await createOwner(db.pool, { name: 'trainer', plan: 'UNLIMITED' })).apiKey;
  // The engine setup of `npm start`, without the cpu engine (not used here).
  const { registry } = await setUpEngines([sandboxEngineModule], { IMAGEGEN_ENGINES: 'sandbox' });
  api = await startLoopbackApi({ pool: db.pool, engines: registry, worker: { pollMs: 100 } });
});

afterAll(async () => {
  await api?.close();
  await images?.close();
  await db?.drop();
});

async function call(method: string, route: string, json?: unknown) {
  const response = await fetch(`${api.url}${route}`, {
    method,
    headers: { 'API-Key': key, ...(json ? { 'content-type': 'application/json' } : {}) },
    ...(json ? { body: JSON.stringify(json) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('training on the embedded default', () => {
  it('is served by the sandbox engine in the default engine order', async () => {
    const { registry, safety } = await setUpEngines([cpuEngineModule, sandboxEngineModule], {});
    try {
      expect(registry.engineFor('/train_model/v1')?.name).toBe('sandbox');
    } finally {
      await registry.close();
      await safety?.close?.();
    }
  });

  it('walks queued or initialising, then running, to completed with a model marked as a sandbox model', async () => {
    const example = endpointByPath('/train_model/v1')?.example as Record<string, unknown>;
    const body = {
      ...example,
      max_train_steps: 100,
      images: [`${imagesUrl}/me-1.png`, `${imagesUrl}/me-2.png`],
      description: 'My face',
      tags: 'portrait',
    };
    const submitted = await call('POST', '/train_model/v1', body);
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    expect(submitted.body.status).toBe('queued');
    const id = submitted.body.id as string;

    const seen: string[] = [];
    let done: Record<string, unknown> = {};
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { status, body: state } = await call('GET', `/train_model/v1/status/${id}`);
      expect(status).toBe(200);
      if (seen.at(-1) !== state.status) seen.push(state.status as string);
      if (state.status === 'completed' || state.status === 'failed') {
        done = state;
        break;
      }
      if (Date.now() > deadline) throw new Error(`training still ${state.status} after 15 s`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(done.status, JSON.stringify(done)).toBe('completed');
    // 100 steps at 20 ms: initialising for the first 0.4 s, running with progress after.
    expect(seen.filter((s) => s !== 'queued')).toEqual(['initialising', 'running', 'completed']);
    expect(done.training_duration_seconds).toBeGreaterThanOrEqual(2);
    expect(done.training_duration_seconds).toBeLessThan(6);

    const model = await call('GET', `/models/v1/${done.model_id}`);
    expect(model.status).toBe(200);
    expect(model.body).toMatchObject({
      model_id: done.model_id,
      model_name: example.model_name,
      trained_model: true,
      tags: 'portrait,sandbox',
      description: `${SANDBOX_MODEL_NOTE} My face`,
    });
  });
});
