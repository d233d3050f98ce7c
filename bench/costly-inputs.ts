/**
 * What the requests built to cost the most through their images and the newer endpoints cost the
 * program as `npm start` runs it (API, worker and webhook dispatcher in one process, engines cpu
 * and sandbox, a bundled PostgreSQL), case by case:
 *
 *   thin_upload            a 1 × 49,999,999 PNG (about 194 KB) uploaded; the slowest /health/live
 *   thin_uploads_x4        four of them at once, and the slowest GET of a stored file meanwhile
 *   large_uploads_x4       four valid 7000 × 7000 PNGs (about 156 KB each, 49 MP) uploaded at once:
 *                          each is decoded whole; the slowest GET of a stored file and /health/live
 *   thin_bgremover         the same picture as /bgremover/v1's init_image (from a loopback URL)
 *   sixty_links            /sd/controlnet/v1 with 60 links to one 19.5 MB upload (sandbox engine)
 *   many_links_body        a body of about 1 MiB holding 14,000 links
 *   cancel_after_inputs    Cancel-After: 5s on a task whose inputs are the 60 links and one that never arrives
 *   superresolution_x4     a 7000 × 7000 PNG (about 143 KB) at scale 4 on the cpu engine
 *   redeliver_storm        one key redelivering one webhook as fast as it is answered, for 10 s
 *   files_folder           GET /files/<an upload's folder>
 *
 * Each case reports what it answered (status, error) and its cost: `wall_ms`, `cpu_ms` (the
 * program's own processes, their threads and children included, PostgreSQL left out; from /proc),
 * `rss_peak_mb` (the most resident memory of those processes above their total before the case,
 * sampled every 50 ms) and `rss_after_mb` (the same, 3 s after the case ended). Cases that would
 * run for hours are given a bounded time and then cancelled; they say so (`gave_up_after_ms`).
 *
 *   npm run --silent bench -- costly-inputs      (last line: one JSON object; progress on stderr)
 *
 * Runs for some minutes on two cores: run it with `nice`, on a quiet machine if you can.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { blackPng, freePort, incompressiblePng } from '@imagegen/server/testing';
import sharp from 'sharp';
import { pollSlowest } from './poll-slowest.ts';

const START = path.resolve(import.meta.dirname, '../packages/app/src/start.ts');
const KEY = `ig_${'b'.repeat(32)}`;
const note = (line: string) => console.error(`[bench costly-inputs] ${line}`);
/** BENCH_CASES=a,b runs only those cases (their names as in the figures). */
const CASES = new Set((process.env.BENCH_CASES ?? '').split(',').filter(Boolean));
const runs = (name: string) => CASES.size === 0 || CASES.has(name);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The program's processes: it and its descendants, PostgreSQL's left out. */
function programPids(root: number): number[] {
  const children = new Map<number, number[]>();
  const names = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      names.set(Number(entry), stat.slice(stat.indexOf('(') + 1, close));
      const parent = Number(stat.slice(close + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    if (pid !== root && names.get(pid)?.startsWith('postgres')) continue;
    found.push(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return found;
}

function cpuMs(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime, stime, and the CPU of children it waited for (cutime, cstime): a checker that exited.
      total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10;
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

function rssMb(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      kb += Number(match?.[1] ?? 0);
    } catch {
      // Gone meanwhile.
    }
  }
  return Math.round(kb / 1024);
}

interface Cost {
  wall_ms: number;
  cpu_ms: number;
  rss_peak_mb: number;
  rss_after_mb: number;
}

/** Runs `work`, measuring the program's cost meanwhile, and 3 s after for the memory left. */
async function measured<T>(root: number, work: () => Promise<T>): Promise<{ result: T; cost: Cost }> {
  const baseRss = rssMb(programPids(root));
  let peak = baseRss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(programPids(root)));
  }, 50);
  // CPU of the whole tree, read from the root's descendants as they are at each reading.
  const cpuBefore = cpuMs(programPids(root));
  const started = performance.now();
  let result: T;
  try {
    result = await work();
  } finally {
    clearInterval(sampler);
  }
  const wall = performance.now() - started;
  const cpu = cpuMs(programPids(root)) - cpuBefore;
  await sleep(3_000);
  return {
    result,
    cost: {
      wall_ms: Math.round(wall),
      cpu_ms: Math.max(0, cpu),
      rss_peak_mb: peak - baseRss,
      rss_after_mb: rssMb(programPids(root)) - baseRss,
    },
  };
}

export default async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'imagegen-bench-costly-'));
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const headers = { 'API-Key': KEY, 'content-type': 'application/json' };

  note('building the pictures');
  const thin = blackPng(1, 49_999_999);
  const large = await sharp({ create: { width: 7000, height: 7000, channels: 3, background: '#4a7' } })
    .png({ compressionLevel: 9 })
    .toBuffer();
  const heavy = await incompressiblePng(2550, 2550);
  const small = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#a47' } })
    .png()
    .toBuffer();
  note(`thin ${thin.length} B, large ${large.length} B, heavy ${heavy.length} B`);

  // Input images and a webhook receiver on loopback (IMAGEGEN_ALLOW_PRIVATE_URLS=1).
  let hooks = 0;
  const images: Server = createServer((request, response) => {
    if (request.method === 'POST') {
      hooks++;
      request.resume();
      request.on('end', () => response.end('ok'));
      return;
    }
    if (request.url === '/stall.png') {
      // Its headers and four bytes, then nothing: an input that never finishes arriving.
      response.writeHead(200, { 'content-type': 'image/png' });
      response.write(small.subarray(0, 4));
      return;
    }
    const body = request.url === '/thin.png' ? thin : request.url === '/large.png' ? large : small;
    response.writeHead(200, { 'content-type': 'image/png', 'content-length': body.length });
    response.end(body);
  });
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  const loopback = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;

  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', START], {
    env: {
      ...process.env,
      IMAGEGEN_DATA_DIR: dataDir,
      API_PORT: String(port),
      IMAGEGEN_ROLES: 'api,worker,webhooks',
      IMAGEGEN_API_KEY: KEY,
      IMAGEGEN_ALLOW_PRIVATE_URLS: '1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout!.on('data', (data) => {
    output += data;
    if (output.length > 100_000) output = output.slice(-50_000);
  });
  const figures: Record<string, unknown> = {};
  try {
    for (const deadline = Date.now() + 300_000; !output.includes('status/<id>'); ) {
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`npm start did not start:\n${output}`);
      await sleep(200);
    }
    const root = child.pid!;
    const upload = async (data: Buffer, name = 'a.png') => {
      const form = new FormData();
      form.append('image_files', new Blob([new Uint8Array(data)], { type: 'image/png' }), name);
      const response = await fetch(`${api}/upload_images`, {
        method: 'POST',
        headers: { 'API-Key': KEY },
        body: form,
      });
      return {
        status: response.status,
        body: (await response.json()) as { image_urls?: string[]; detail?: unknown },
      };
    };
    const submit = async (pipeline: string, body: unknown, more: Record<string, string> = {}) => {
      const response = await fetch(`${api}${pipeline}`, {
        method: 'POST',
        headers: { ...headers, ...more },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as { id?: string; detail?: unknown } };
    };
    const status = async (pipeline: string, id: string) =>
      (await (await fetch(`${api}${pipeline}/status/${id}`, { headers })).json()) as {
        status: string;
        error?: string;
        eta_seconds?: number;
        progress?: number;
      };
    const settled = async (pipeline: string, id: string, giveUpMs: number) => {
      const started = Date.now();
      for (;;) {
        const answer = await status(pipeline, id);
        if (answer.status === 'SUCCESS' || answer.status === 'FAILURE') return answer;
        if (Date.now() - started > giveUpMs) {
          await fetch(`${api}${pipeline}/cancel/${id}`, { method: 'POST', headers });
          return { ...answer, gave_up_after_ms: giveUpMs };
        }
        await sleep(200);
      }
    };

    note('warming up: a small upload and a small removal (loads the cpu engine)');
    const warm = await upload(small);
    const warmTask = await submit('/bgremover/v1', { init_image: `${loopback}/small.png` });
    await settled('/bgremover/v1', warmTask.body.id!, 300_000);
    const smallUrl = warm.body.image_urls![0]!;

    if (runs('thin_upload')) {
      note('thin_upload');
      const live = pollSlowest(`${api}/health/live`);
      const { result, cost } = await measured(root, () => upload(thin));
      figures.thin_upload = {
        status: result.status,
        detail: result.body.detail ?? null,
        ...cost,
        slowest_live_ms: await live.stop(),
      };
      note(JSON.stringify(figures.thin_upload));
    }

    if (runs('thin_uploads_x4')) {
      note('thin_uploads_x4');
      const files = pollSlowest(smallUrl);
      const live = pollSlowest(`${api}/health/live`);
      const { result, cost } = await measured(root, () => Promise.all([1, 2, 3, 4].map(() => upload(thin))));
      figures.thin_uploads_x4 = {
        statuses: result.map((r) => r.status),
        ...cost,
        slowest_file_get_ms: await files.stop(),
        slowest_live_ms: await live.stop(),
      };
      note(JSON.stringify(figures.thin_uploads_x4));
    }

    if (runs('large_uploads_x4')) {
      note('large_uploads_x4');
      const files = pollSlowest(smallUrl);
      const live = pollSlowest(`${api}/health/live`);
      const { result, cost } = await measured(root, () => Promise.all([1, 2, 3, 4].map(() => upload(large))));
      figures.large_uploads_x4 = {
        statuses: result.map((r) => r.status),
        ...cost,
        slowest_file_get_ms: await files.stop(),
        slowest_live_ms: await live.stop(),
      };
      note(JSON.stringify(figures.large_uploads_x4));
    }

    if (runs('thin_bgremover')) {
      note('thin_bgremover');
      const { result, cost } = await measured(root, async () => {
        const task = await submit('/bgremover/v1', { init_image: `${loopback}/thin.png` });
        return task.body.id ? settled('/bgremover/v1', task.body.id, 600_000) : task;
      });
      figures.thin_bgremover = { answer: result, ...cost };
      note(JSON.stringify(figures.thin_bgremover));
    }

    const heavyUpload = runs('sixty_links') || runs('cancel_after_inputs') ? await upload(heavy) : undefined;
    const heavyUrl = heavyUpload?.body.image_urls?.[0];
    if (heavyUpload) note(`heavy upload: ${heavyUpload.status}`);
    // The sandbox engine's controlnet: the inputs are fetched and checked, the engine reads none.
    const controlnet = (links: string[]) => ({
      prompt: 'a portrait',
      negative_prompt: '',
      init_images: links,
      width: 64,
      height: 64,
    });
    if (runs('sixty_links') && heavyUrl) {
      note('sixty_links');
      const { result, cost } = await measured(root, async () => {
        const task = await submit('/sd/controlnet/v1', controlnet(Array(60).fill(heavyUrl)));
        return task.body.id ? settled('/sd/controlnet/v1', task.body.id, 600_000) : task;
      });
      figures.sixty_links = { answer: result, ...cost };
      note(JSON.stringify(figures.sixty_links));
    }

    if (runs('many_links_body')) {
      note('many_links_body');
      const link = smallUrl;
      const count = Math.floor(1_000_000 / (link.length + 3));
      const { result, cost } = await measured(root, async () => {
        const task = await submit('/sd/controlnet/v1', controlnet(Array(count).fill(link)));
        if (task.body.id)
          await fetch(`${api}/sd/controlnet/v1/cancel/${task.body.id}`, { method: 'POST', headers });
        return { status: task.status, links: count };
      });
      figures.many_links_body = { ...result, ...cost };
      note(JSON.stringify(figures.many_links_body));
    }

    if (runs('cancel_after_inputs') && heavyUrl) {
      note('cancel_after_inputs');
      const { result, cost } = await measured(root, async () => {
        const started = Date.now();
        // Slow inputs: sixty reads of the upload, then one that never finishes.
        const links = [...Array(60).fill(heavyUrl), `${loopback}/stall.png`];
        const task = await submit('/sd/controlnet/v1', controlnet(links), { 'Cancel-After': '5s' });
        if (!task.body.id) return task;
        const answer = await settled('/sd/controlnet/v1', task.body.id, 600_000);
        return { ...answer, failed_after_ms: Date.now() - started };
      });
      figures.cancel_after_inputs = { answer: result, ...cost };
      note(JSON.stringify(figures.cancel_after_inputs));
    }

    if (runs('superresolution_x4')) {
      note('superresolution_x4');
      const { result, cost } = await measured(root, async () => {
        const task = await submit('/superresolution/v1', {
          model_name: 'RealESRGAN_x4plus',
          init_image: `${loopback}/large.png`,
          scale_factor: 4,
          tile: 256,
        });
        if (!task.body.id) return task;
        const started = Date.now();
        let seen: Awaited<ReturnType<typeof status>> = { status: 'PENDING' };
        let eta = 0;
        // Long enough to see its own estimate; then it is cancelled.
        while (Date.now() - started < 120_000) {
          seen = await status('/superresolution/v1', task.body.id);
          eta = Math.max(eta, seen.eta_seconds ?? 0);
          if (seen.status !== 'PENDING') break;
          await sleep(500);
        }
        if (seen.status === 'PENDING') {
          await fetch(`${api}/superresolution/v1/cancel/${task.body.id}`, { method: 'POST', headers });
          return { ...seen, largest_eta_seconds: eta, gave_up_after_ms: Date.now() - started };
        }
        return { ...seen, ended_after_ms: Date.now() - started };
      });
      figures.superresolution_x4 = { answer: result, ...cost };
      note(JSON.stringify(figures.superresolution_x4));
    }

    if (runs('redeliver_storm')) {
      note('redeliver_storm');
      const task = await submit('/sd/text2image/v1', {
        prompt: 'a hook',
        negative_prompt: '',
        width: 64,
        height: 64,
        webhook: `${loopback}/hook`,
      });
      await settled('/sd/text2image/v1', task.body.id!, 60_000);
      let delivery: { id: string; status: string } | undefined;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
        const list = (await (
          await fetch(`${api}/webhooks/v1/deliveries?task_id=${task.body.id}`, { headers })
        ).json()) as { deliveries: { id: string; status: string }[] };
        const rows = list.deliveries;
        delivery = rows[0];
        if (delivery && delivery.status !== 'pending') break;
      }
      const hooksBefore = hooks;
      const counts: Record<string, number> = {};
      const { cost } = await measured(root, async () => {
        for (const end = Date.now() + 10_000; Date.now() < end; ) {
          const response = await fetch(`${api}/webhooks/v1/deliveries/${delivery!.id}/redeliver`, {
            method: 'POST',
            headers,
          });
          await response.arrayBuffer();
          counts[response.status] = (counts[response.status] ?? 0) + 1;
          if (response.status === 429) await sleep(100);
        }
      });
      await sleep(2_000);
      const listing = await (
        await fetch(`${api}/webhooks/v1/deliveries?limit=100`, { headers })
      ).arrayBuffer();
      figures.redeliver_storm = {
        answers_in_10s: counts,
        webhook_posts: hooks - hooksBefore,
        listing_bytes: listing.byteLength,
        ...cost,
      };
      note(JSON.stringify(figures.redeliver_storm));
    }

    if (runs('files_folder')) {
      note('files_folder');
      const folder = new URL(smallUrl).pathname.split('/').slice(0, -1).join('/');
      const response = await fetch(`${api}${folder}`);
      figures.files_folder = { status: response.status, body: (await response.text()).slice(0, 200) };
      note(JSON.stringify(figures.files_folder));
    }
    console.log(JSON.stringify(figures));
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await Promise.race([new Promise((resolve) => child.once('exit', resolve)), sleep(30_000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    images.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
