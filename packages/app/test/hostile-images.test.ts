import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  blackPng,
  createTestDatabase,
  freePort,
  incompressiblePng,
  type TestDatabase,
} from '@imagegen/server/testing';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollWhile } from './support/poll-while.ts';
import { type StartedProcess, startProcess } from './support/start-process.ts';

/**
 * The requests built to cost the most through their images, their inputs and the endpoints that
 * write for the caller, sent to the program as `npm start` runs it (API, worker and webhook
 * dispatcher in one process, engines cpu and sandbox): each is answered as the docs say, at a
 * bounded cost in CPU and memory, and none delays `/health/live` or the files the API serves.
 * Before these bounds (same machine, `npm run --silent bench -- costly-inputs`): an upload of
 * 1 × 49,999,999 pixels cost 47 s of CPU and was accepted; four at once held `GET /files/...` for
 * 219 s; that picture as a background removal's input cost 187 s of CPU and 1.4 GB kept; a
 * superresolution of 7000 × 7000 at ×4 promised to run 22 hours and kept 1.6 GB; one key
 * redelivered a webhook 115 times in 10 s; `/files/<folder>` answered 500.
 */

const KEY = `ig_${'i'.repeat(32)}`;
/**
 * The slowest `/health/live` answer allowed while the work runs. A decode that held the event loop
 * stalled it 2 to 5 s; a busy CI machine alone can delay an answer by some hundreds of ms.
 */
const LIVE_BOUND_MS = 1_000;
/**
 * The slowest stored file's answer allowed meanwhile: a file is read in several steps on libuv's
 * thread pool (open, read, close, and its type file's), each waiting for a core on a busy
 * machine. When the decodes shared that pool, four of them held a file for 219 s.
 */
const FILE_BOUND_MS = 1_000;
/** Server CPU (every process of the program) a request refused from its header may cost. */
const REFUSAL_CPU_MS = 2_000;
/** What the program's memory may grow by while one of these requests is worked on. */
const RSS_BOUND_MB = 200;

let db: TestDatabase;
let dataDir: string;
let server: StartedProcess;
let url: string;
let images: Server;
let imagesUrl: string;
let smallUpload: string;
const hooks: { at: number }[] = [];
/** The pictures the image server answers, by path; `/stall.png` answers headers only. */
const pictures = new Map<string, Buffer>();

beforeAll(async () => {
  pictures.set('/thin.png', blackPng(1, 49_999_999));
  pictures.set(
    '/large.png',
    await sharp({ create: { width: 7000, height: 7000, channels: 3, background: '#4a7' } })
      .png({ compressionLevel: 9 })
      .toBuffer(),
  );
  images = createServer((request, response) => {
    if (request.method === 'POST') {
      hooks.push({ at: Date.now() });
      request.resume();
      request.on('end', () => response.writeHead(204).end());
      return;
    }
    const body = pictures.get(request.url ?? '');
    if (request.url === '/stall.png') {
      response.writeHead(200, { 'content-type': 'image/png' });
      response.write(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      return;
    }
    if (!body) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'image/png', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  imagesUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;

  db = await createTestDatabase({ migrate: false });
  dataDir = await mkdtemp(path.join(tmpdir(), 'imagegen-hostile-images-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  server = startProcess({
    ...process.env,
    DATABASE_URL: db.url,
    IMAGEGEN_DATA_DIR: dataDir,
    API_PORT: String(port),
    IMAGEGEN_ROLES: 'api,worker,webhooks',
    IMAGEGEN_ENGINES: 'cpu,sandbox',
    IMAGEGEN_API_KEY: KEY,
    IMAGEGEN_ALLOW_PRIVATE_URLS: '1',
    PUBLIC_URL: '',
    LOG_LEVEL: 'warn',
  });
  await server.waitFor('status/<id>', 120_000);
  const small = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#a47' } })
    .png()
    .toBuffer();
  const uploaded = await upload(small);
  expect(uploaded.status).toBe(200);
  smallUpload = (uploaded.body as { image_urls: string[] }).image_urls[0]!;
}, 180_000);

afterAll(async () => {
  server?.kill();
  images?.closeAllConnections();
  images?.close();
  await db?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** The program's processes: it and its descendants (its decode processes among them). */
function programPids(): number[] {
  const root = server.child.pid!;
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // It ended while we looked.
    }
  }
  const found: number[] = [];
  for (const pending = [root]; pending.length > 0; ) {
    const pid = pending.pop()!;
    found.push(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** The program's CPU time so far in ms: its processes', and their children's that have exited. */
function cpuMs(): number {
  let ticks = 0;
  for (const pid of programPids()) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      // utime, stime, cutime, cstime (USER_HZ is 100 on Linux: 10 ms ticks).
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // It ended while we looked.
    }
  }
  return ticks * 10;
}

function rssMb(): number {
  let kb = 0;
  for (const pid of programPids()) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // It ended while we looked.
    }
  }
  return kb / 1024;
}

/** Runs `work`, answering with it the program's CPU and the most its memory grew meanwhile. */
async function costOf<T>(work: () => Promise<T>): Promise<{ result: T; cpuMs: number; rssGrowthMb: number }> {
  const baseline = rssMb();
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb());
  }, 50);
  const before = cpuMs();
  try {
    const result = await work();
    return { result, cpuMs: cpuMs() - before, rssGrowthMb: Math.max(peak, rssMb()) - baseline };
  } finally {
    clearInterval(sampler);
  }
}

async function upload(data: Buffer): Promise<{ status: number; body: unknown }> {
  const form = new FormData();
  form.append('image_files', new Blob([new Uint8Array(data)], { type: 'image/png' }), 'a.png');
  const response = await fetch(`${url}/upload_images`, {
    method: 'POST',
    headers: { 'API-Key': KEY },
    body: form,
  });
  return { status: response.status, body: await response.json() };
}

async function submit(
  pipeline: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: { id?: string; detail?: unknown } }> {
  const response = await fetch(`${url}${pipeline}`, {
    method: 'POST',
    headers: { 'API-Key': KEY, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { id?: string } };
}

async function settled(pipeline: string, id: string): Promise<{ status: string; error?: string }> {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
    const response = await fetch(`${url}${pipeline}/status/${id}`, { headers: { 'API-Key': KEY } });
    const answer = (await response.json()) as { status: string; error?: string };
    if (answer.status === 'SUCCESS' || answer.status === 'FAILURE') return answer;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`task ${id} did not end in 120 s`);
}

/** The slowest answer per URL, in ms, while `work` runs (0 where none came). */
async function slowestWhile(urls: string[], work: () => Promise<unknown>): Promise<number[]> {
  return (await pollWhile(urls, work)).map((times) => Math.max(0, ...times));
}

describe('hostile images', () => {
  it('refuses an upload of 1 × 49,999,999 pixels from its header, at once', async () => {
    const { result, cpuMs: used } = await costOf(() => upload(pictures.get('/thin.png')!));
    expect(result).toEqual({
      status: 422,
      body: {
        detail: [
          {
            loc: ['body', 'image_files', 0],
            msg: 'image is 1×49999999; each side may be at most 16384 pixels',
            type: 'value_error.image',
          },
        ],
      },
    });
    expect(used).toBeLessThan(REFUSAL_CPU_MS);
  }, 60_000);

  it('decodes four large uploads at once without delaying the files it serves or its health', async () => {
    const large = pictures.get('/large.png')!;
    let statuses: number[] = [];
    const [live, file] = await slowestWhile([`${url}/health/live`, smallUpload], async () => {
      statuses = (await Promise.all([1, 2, 3, 4].map(() => upload(large)))).map((answer) => answer.status);
    });
    expect(statuses).toEqual([200, 200, 200, 200]);
    console.log(
      `four 7000 × 7000 uploads: slowest /health/live ${Math.round(live!)} ms, file ${Math.round(file!)} ms`,
    );
    expect(live).toBeLessThan(LIVE_BOUND_MS);
    expect(file).toBeLessThan(FILE_BOUND_MS);
  }, 180_000);

  it('fails a removal of that picture at once, naming the field, and keeps no memory for it', async () => {
    const {
      result,
      cpuMs: used,
      rssGrowthMb,
    } = await costOf(async () => {
      const task = await submit('/bgremover/v1', { init_image: `${imagesUrl}/thin.png` });
      return settled('/bgremover/v1', task.body.id!);
    });
    expect(result).toEqual({
      status: 'FAILURE',
      error: 'init_image: image is 1×49999999; each side may be at most 16384 pixels',
    });
    expect(used).toBeLessThan(REFUSAL_CPU_MS);
    expect(rssGrowthMb).toBeLessThan(RSS_BOUND_MB);
  }, 60_000);

  it('fails a superresolution that would make 28000 × 28000 at once, before decoding it', async () => {
    const {
      result,
      cpuMs: used,
      rssGrowthMb,
    } = await costOf(async () => {
      const task = await submit('/superresolution/v1', {
        model_name: 'RealESRGAN_x4plus',
        init_image: `${imagesUrl}/large.png`,
        scale_factor: 4,
        tile: 256,
      });
      return settled('/superresolution/v1', task.body.id!);
    });
    expect(result).toEqual({
      status: 'FAILURE',
      error:
        'init_image: 7000×7000 at scale 4 makes 28000×28000 (784 MP), above the 16.8 MP the cpu engine makes (IMAGEGEN_CPU_MAX_OUTPUT_PIXELS)',
    });
    // The input was fetched and decoded once to check it (49 megapixels), nothing more.
    expect(used).toBeLessThan(10_000);
    expect(rssGrowthMb).toBeLessThan(RSS_BOUND_MB);
  }, 120_000);

  it('reads an upload named sixty times once, in bounded memory', async () => {
    const heavy = await incompressiblePng(2550, 2550);
    expect(heavy.length).toBeGreaterThan(19_000_000);
    const uploaded = await upload(heavy);
    expect(uploaded.status).toBe(200);
    const link = (uploaded.body as { image_urls: string[] }).image_urls[0]!;
    const { result, rssGrowthMb } = await costOf(async () => {
      const task = await submit('/sd/controlnet/v1', {
        prompt: 'p',
        negative_prompt: '',
        init_images: Array(60).fill(link),
        width: 64,
        height: 64,
      });
      return settled('/sd/controlnet/v1', task.body.id!);
    });
    expect(result.status).toBe('SUCCESS');
    // Sixty reads of a 19.5 MB file, each decoded, took 1.2 GB before.
    expect(rssGrowthMb).toBeLessThan(RSS_BOUND_MB);
  }, 120_000);

  it('refuses a body of a megabyte of links at submission', async () => {
    const many = Array<string>(Math.floor(1_000_000 / (smallUpload.length + 3))).fill(smallUpload);
    const { result, cpuMs: used } = await costOf(() =>
      submit('/sd/controlnet/v1', { prompt: 'p', negative_prompt: '', init_images: many }),
    );
    expect(result.status).toBe(422);
    expect(used).toBeLessThan(10_000);
  }, 60_000);

  it('fails a task whose input never finishes arriving within a second of its Cancel-After', async () => {
    const task = await submit(
      '/bgremover/v1',
      { init_image: `${imagesUrl}/stall.png` },
      { 'Cancel-After': '2s' },
    );
    expect(await settled('/bgremover/v1', task.body.id!)).toEqual({
      status: 'FAILURE',
      error: "the task's deadline (Cancel-After: 2s) passed",
    });
    const { rows } = await db.pool.query<{ late_ms: number }>(
      'SELECT extract(epoch from finished_at - deadline_at) * 1000 AS late_ms FROM tasks WHERE id = $1',
      [task.body.id],
    );
    expect(Number(rows[0]!.late_ms)).toBeLessThan(1_000);
  }, 60_000);

  it('answers a link to an upload’s folder 404, not 500', async () => {
    const folder = new URL(smallUpload).pathname.split('/').slice(0, -1).join('/');
    const response = await fetch(`${url}${folder}`);
    expect([response.status, await response.json()]).toEqual([404, { detail: 'File not found' }]);
  });

  it('lets one key redeliver a webhook a few times, then answers 429 with Retry-After', async () => {
    const task = await submit('/sd/text2image/v1', {
      prompt: 'p',
      negative_prompt: '',
      width: 64,
      height: 64,
      webhook: `${imagesUrl}/hook`,
    });
    await settled('/sd/text2image/v1', task.body.id!);
    const listing = async () =>
      (
        (await (
          await fetch(`${url}/webhooks/v1/deliveries?task_id=${task.body.id}`, {
            headers: { 'API-Key': KEY },
          })
        ).json()) as { deliveries: { id: string; status: string; attempts: unknown[] }[] }
      ).deliveries[0];
    for (let delivery = await listing(); delivery?.status !== 'delivered'; delivery = await listing()) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const id = (await listing())!.id;
    const hooksBefore = hooks.length;
    const answers: Record<number, number> = {};
    let retryAfter: string | null = null;
    // Redelivered as fast as the API answers, for 5 s.
    for (const end = Date.now() + 5_000; Date.now() < end; ) {
      const response = await fetch(`${url}/webhooks/v1/deliveries/${id}/redeliver`, {
        method: 'POST',
        headers: { 'API-Key': KEY },
      });
      await response.arrayBuffer();
      answers[response.status] = (answers[response.status] ?? 0) + 1;
      if (response.status === 429) retryAfter = response.headers.get('retry-after');
    }
    expect(answers[200]).toBeLessThanOrEqual(10);
    expect(answers[429]).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // At most the ten a day allows reached the receiver; the delivery keeps its newest attempts.
    expect(hooks.length - hooksBefore).toBeLessThanOrEqual(10);
    expect((await listing())!.attempts.length).toBeLessThanOrEqual(25);
  }, 60_000);
});
