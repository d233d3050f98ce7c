import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { compileRequestValidator, endpointByPath, readRequestBody } from '@imagegen/contract';
import { OFF_LOOP_BODY_BYTES } from '@imagegen/server';
import {
  createTestDatabase,
  freePort,
  HOSTILE_SHAPES,
  type HostileShape,
  type TestDatabase,
} from '@imagegen/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollWhile } from './support/poll-while.ts';
import { type StartedProcess, startProcess } from './support/start-process.ts';

/**
 * The bodies built to cost the most (the server's test support, hostile-bodies.ts), sent at the largest size the API
 * reads to the program as `npm start` runs it (API and worker in one process, the sandbox engine):
 * each answers what the original answers, costs the process a bounded amount of CPU, and never
 * holds its event loop, so `/health/live` answers at once throughout, while a sandbox task with a
 * prompt of a megabyte runs too. The figures per size are the benchmark's
 * (`npm run --silent bench -- hostile`); these are the guards.
 */

/** Just under the API's 1 MiB body limit. */
const LARGEST = 1_000_000;
/** A GET's path and query must fit Node's 16 KiB of headers. */
const LARGEST_QUERY = 12_000;
/** The slowest `/health/live` answer allowed while the bodies are read (a busy CI machine). */
const LIVE_BOUND_MS = 250;
/**
 * Server CPU one largest body may cost, its threads included: a bound that only a cost growing
 * faster than the body breaks (a 300 KB body once took 19 s, a 500 KB one over 2 minutes).
 */
const CPU_BOUND_MS = 10_000;
const KEY = `ig_${'h'.repeat(32)}`;

let db: TestDatabase;
let dataDir: string;
let server: StartedProcess;
let url: string;

beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  dataDir = await mkdtemp(path.join(tmpdir(), 'imagegen-hostile-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  server = startProcess({
    ...process.env,
    DATABASE_URL: db.url,
    IMAGEGEN_DATA_DIR: dataDir,
    API_PORT: String(port),
    IMAGEGEN_ROLES: 'api,worker',
    IMAGEGEN_ENGINES: 'sandbox',
    IMAGEGEN_API_KEY: KEY,
    PUBLIC_URL: '',
    LOG_LEVEL: 'warn',
  });
  await server.waitFor('status/<id>');
}, 120_000);

afterAll(async () => {
  server?.kill();
  await db?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** The server process's CPU time so far (every thread), in ms. */
function serverCpuMs(): number {
  const stat = readFileSync(`/proc/${server.child.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, in clock ticks of 10 ms (USER_HZ is 100 on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function sizeOf(shape: HostileShape): number {
  return shape.method === 'GET' ? LARGEST_QUERY : LARGEST;
}

function send(shape: HostileShape, bytes = sizeOf(shape), signal?: AbortSignal): Promise<Response> {
  const text = shape.build(bytes);
  const init: RequestInit = {
    method: shape.method,
    headers: {
      'API-Key': KEY,
      ...(shape.contentType ? { 'content-type': shape.contentType } : { 'content-type': 'application/json' }),
    },
    ...(signal ? { signal } : {}),
  };
  if (shape.method === 'GET') return fetch(`${url}${text}`, init);
  return fetch(`${url}${shape.path}`, { ...init, body: text });
}

/** What the contract answers for a body, worked out here without the API. */
function expectedAnswer(shape: HostileShape, text: string): string {
  const reading = readRequestBody(Buffer.from(text), shape.contentType ?? 'application/json');
  if (!reading.ok) return JSON.stringify({ detail: reading.detail });
  const checked = compileRequestValidator(endpointByPath(shape.path)!)(reading.value);
  return JSON.stringify(checked.ok ? {} : { detail: checked.detail });
}

/** Submits a sandbox text2image task; answers its id. */
async function submit(body: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${url}/sd/text2image/v1`, {
    method: 'POST',
    headers: { 'API-Key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

/** Polls a text2image task until it ends; answers its status. */
async function settled(id: string): Promise<string> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const response = await fetch(`${url}/sd/text2image/v1/status/${id}`, { headers: { 'API-Key': KEY } });
    const { status } = (await response.json()) as { status: string };
    if (status === 'SUCCESS' || status === 'FAILURE') return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`task ${id} did not end in 60 s`);
}

describe('hostile bodies', () => {
  it.each(HOSTILE_SHAPES.map((shape) => [shape.name, shape] as const))(
    '%s: answers what the original answers, at a bounded cost',
    async (_name, shape) => {
      const before = serverCpuMs();
      const response = await send(shape);
      const text = await response.text();
      const used = serverCpuMs() - before;
      expect(response.status).toBe(shape.status);
      if (shape.method === 'POST') expect(text).toBe(expectedAnswer(shape, shape.build(sizeOf(shape))));
      expect(used).toBeLessThan(CPU_BOUND_MS);
    },
    60_000,
  );

  it('reads a small body on the event loop and a large one on the thread, to the same answer', async () => {
    const shape = HOSTILE_SHAPES.find((candidate) => candidate.name === 'invalid-list-items')!;
    for (const bytes of [OFF_LOOP_BODY_BYTES / 2, OFF_LOOP_BODY_BYTES * 4]) {
      const response = await send(shape, bytes);
      expect(await response.text()).toBe(expectedAnswer(shape, shape.build(bytes)));
    }
    // A valid large body is queued as it was sent: the prompt whole, the defaults filled in.
    const prompt = 'a lighthouse at dawn '.repeat(5_000);
    const submitted = await submit({ prompt, negative_prompt: 'blurry', width: 64, height: 64 });
    const { rows } = await db.pool.query<{ input: Record<string, unknown> }>(
      'SELECT input FROM tasks WHERE id = $1',
      [submitted],
    );
    expect(rows[0]?.input).toMatchObject({ prompt, num_inference_steps: 20, width: 64 });
  }, 60_000);

  it('leaves a large body to a route without a body schema as it arrived', async () => {
    // A cancel path reads no body: a large one is not sent to the thread, which has no schema
    // for it, and answers as a small one does.
    const nested = HOSTILE_SHAPES.find((candidate) => candidate.name === 'deep-nesting')!;
    const cancel = `${url}/sd/text2image/v1/cancel/00000000-0000-4000-8000-000000000000`;
    const answers = [];
    for (const bytes of [OFF_LOOP_BODY_BYTES / 2, LARGEST]) {
      const response = await fetch(cancel, {
        method: 'POST',
        headers: { 'API-Key': KEY, 'content-type': 'application/json' },
        body: nested.build(bytes),
      });
      answers.push([response.status, ((await response.json()) as { detail: unknown }).detail]);
    }
    expect(answers[0]?.[0]).toBeLessThan(500);
    expect(answers[1]).toEqual(answers[0]);
  }, 60_000);

  it('keeps /health/live answering while the worst bodies and a megabyte prompt are worked on', async () => {
    const worst = ['invalid-list-items', 'many-enum-errors', 'too-long-list', 'wrong-type-list-items'].map(
      (name) => HOSTILE_SHAPES.find((shape) => shape.name === name)!,
    );
    const prompt = 'a red fox in the snow '.repeat(45_000);
    const work = () =>
      Promise.all([
        ...worst.map(async (shape) => (await send(shape)).arrayBuffer()),
        (async () => {
          const id = await submit({ prompt, negative_prompt: 'x', width: 1024, height: 1024, samples: 2 });
          expect(await settled(id)).toBe('SUCCESS');
        })(),
      ]);
    const [times = []] = await pollWhile([`${url}/health/live`], work);
    expect(times.length).toBeGreaterThan(3);
    const slowest = Math.max(...times);
    console.log(`/health/live under hostile load: ${times.length} polls, slowest ${Math.round(slowest)} ms`);
    expect(slowest, `poll times (ms): ${times.map(Math.round).join(' ')}`).toBeLessThan(LIVE_BOUND_MS);
  }, 120_000);

  it('drops a large body whose client left before the thread took it', async () => {
    // The body that costs the thread most (one 422 entry per item): enough of them ahead keep the
    // one thread busy for well over a second, however fast this machine reads one.
    const slow = HOSTILE_SHAPES.find((candidate) => candidate.name === 'invalid-list-items')!;
    const started = performance.now();
    await (await send(slow)).arrayBuffer();
    const aheadCount = Math.min(40, Math.ceil(1_500 / (performance.now() - started)) + 2);
    const counted = async (outcome: string) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith(`imagegen_large_bodies_total{outcome="${outcome}"}`));
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    const droppedBefore = await counted('dropped');
    const ahead = Array.from({ length: aheadCount }, async () => (await send(slow)).arrayBuffer());
    // Sent once the bodies ahead are queued; its client gives up while it waits behind them.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const leaving = new AbortController();
    const left = send(slow, LARGEST, leaving.signal).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 300));
    leaving.abort();
    expect(await left).toBeInstanceOf(Error);
    await Promise.all(ahead);
    expect(await counted('dropped')).toBe(droppedBefore + 1);
  }, 60_000);
});
