import { type FakeComfyUI, startFakeComfyUI, suiteModelFiles } from '@imagegen/comfyui-fake';
import { COMPILERS, createComfyClient, createComfyuiEngine } from '@imagegen/engine-comfyui/engine';
import { createEngineRegistry, type Engine } from '@imagegen/engines';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { apiCalls } from '../support/api-calls.ts';
import { openStream, type StreamMessage } from '../support/event-stream.ts';
import { eventually } from '../support/fakes.ts';
import { type LoopbackApi, startLoopbackApi } from '../support/loopback.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/**
 * Live previews through the real API, its worker and the comfyui engine, against a FAKE ComfyUI
 * that sends a preview frame after each sampler step as the recordings of a real server show: the
 * owner's status stream asked for them carries them as `preview` events, at most two a second, the
 * newest at once to a stream that opens late; a stream that did not ask carries none.
 */

const CHECKPOINTS = { 'sd1.5': 'random-sd15.safetensors' };
const PIPELINE = '/sd/text2image/v1';
/**
 * A 64 × 64 picture is sampled at SD1.5's native 512 × 512 and then resized, so the fake's
 * previews, at latent size, are 64 × 64.
 */
const BODY = { prompt: 'a fox', negative_prompt: '', num_inference_steps: 8, width: 64, height: 64 };
/** The worker's bound on previews: one every 500 ms at most (PREVIEW_INTERVAL_MS). */
const INTERVAL_MS = 500;

let db: TestDatabase;
let api: LoopbackApi;
let engine: Engine;
let fake: FakeComfyUI;
let alice: string;
let bob: string;

beforeAll(async () => {
  const models = await suiteModelFiles(CHECKPOINTS);
  // Steps far apart enough that a run spans several preview intervals.
  fake = await startFakeComfyUI({ models, stepDelayMs: 150, previews: true });
  engine = createComfyuiEngine({
    servers: [createComfyClient({ url: fake.url, name: fake.name, silenceMs: 200 })],
    compilers: COMPILERS,
    checkpoints: CHECKPOINTS,
    pool: { checkEveryMs: 60_000 },
  });
  db = await createTestDatabase();
  alice = (await createOwner(db.pool, { name: 'alice', plan: 'UNLIMITED' })).apiKey;
  bob = (await createOwner(db.pool, { name: 'bob', plan: 'UNLIMITED' })).apiKey;
  api = await startLoopbackApi({
    pool: db.pool,
    engines: createEngineRegistry([engine], { enabled: ['comfyui'], pinned: {} }),
  });
});

afterAll(async () => {
  await api?.close();
  await engine?.close?.();
  await fake?.close();
  await db?.drop();
});

const http = apiCalls(() => api.url);

/** Every message of a stream until the server ends it. */
async function readAll(url: string, key: string): Promise<StreamMessage[]> {
  const stream = await openStream(url, { 'API-Key': key });
  expect(stream.status).toBe(200);
  const messages: StreamMessage[] = [];
  for (let message = await stream.next(30_000); message; message = await stream.next(30_000))
    messages.push(message);
  return messages;
}

async function storedPreviews(taskId: string): Promise<number> {
  const rows = await db.pool.query('SELECT count(*)::int AS n FROM task_previews WHERE task_id = $1', [
    taskId,
  ]);
  return (rows.rows[0] as { n: number }).n;
}

async function expectJpeg(message: StreamMessage): Promise<void> {
  expect(message.id).toBeUndefined();
  const preview = JSON.parse(message.data!) as { content_type: string; image: string };
  expect(preview.content_type).toBe('image/jpeg');
  const { format, width, height } = await sharp(Buffer.from(preview.image, 'base64')).metadata();
  expect({ format, width, height }).toEqual({ format: 'jpeg', width: 64, height: 64 });
}

describe('live previews on the status stream', () => {
  it('sends the owner the picture as it forms, at most two a second, between the statuses', async () => {
    const started = Date.now();
    const id = await http.submit(PIPELINE, BODY, alice);
    const messages = await readAll(`${api.url}${PIPELINE}/status/${id}/events?previews=true`, alice);
    const elapsed = Date.now() - started;
    const previews = messages.filter((message) => message.event === 'preview');
    const statuses = messages.filter((message) => message.data !== undefined && message.event === undefined);
    expect(previews.length).toBeGreaterThan(0);
    // The worker stores one every 500 ms at most, all within the run; the fake sent one per step.
    expect(previews.length).toBeLessThanOrEqual(
      Math.min(BODY.num_inference_steps, 1 + elapsed / INTERVAL_MS),
    );
    for (const preview of previews) await expectJpeg(preview);
    expect(JSON.parse(statuses.at(-1)!.data!)).toMatchObject({ status: 'SUCCESS' });
    // The final status is the last thing the stream says.
    expect(messages.at(-1)).toBe(statuses.at(-1));
    // The attempt's preview is gone once it ended.
    expect(await storedPreviews(id)).toBe(0);
  });

  it('sends none to a stream that did not ask for them', async () => {
    const id = await http.submit(PIPELINE, { ...BODY, seed: 2 }, alice);
    const messages = await readAll(`${api.url}${PIPELINE}/status/${id}/events`, alice);
    expect(messages.some((message) => message.event !== undefined)).toBe(false);
    expect(JSON.parse(messages.at(-1)!.data!)).toMatchObject({ status: 'SUCCESS' });
  });

  it('gives a stream that opens late the newest preview at once, and nobody else the task', async () => {
    // Held after its third step: no new preview comes while the stream opens.
    fake.faults.afterStep(3, 'stall');
    const id = await http.submit(PIPELINE, { ...BODY, seed: 3 }, alice);
    await eventually(
      async () => (fake.stalled && (await storedPreviews(id)) === 1 ? true : undefined),
      20_000,
    );
    const url = `${api.url}${PIPELINE}/status/${id}/events?previews=true`;
    const stranger = await openStream(url, { 'API-Key': bob });
    expect(stranger.status).toBe(404);
    const stream = await openStream(url, { 'API-Key': alice });
    const first: StreamMessage[] = [];
    while (!first.some((message) => message.event === 'preview')) {
      const message = await stream.next(10_000);
      expect(message).not.toBeNull();
      first.push(message!);
    }
    await expectJpeg(first.at(-1)!);
    fake.faults.resume();
    for (let message = await stream.next(30_000); message; message = await stream.next(30_000))
      first.push(message);
    const last = first.filter((message) => message.event === undefined && message.data).at(-1)!;
    expect(JSON.parse(last.data!)).toMatchObject({ status: 'SUCCESS' });
  });
});
