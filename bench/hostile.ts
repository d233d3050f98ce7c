/**
 * What the bodies built to cost the most (the server's test support, hostile-bodies.ts) cost the
 * API, at 10 KB, 100 KB and 1 MiB (a GET's query only up to 12 KB: Node's header limit):
 *
 *   cpu_ms:   the API process's CPU per request, its threads included (from /proc): requests sent
 *             one after the other until they took 200 ms of CPU together (at least BENCH_ROUNDS,
 *             3), so that the clock's 10 ms ticks do not hide a small figure
 *   ms:       the time to the whole answer, median
 *   exponent: how the CPU grows with the size, the slope of log(cpu) over log(bytes) from the
 *             smallest size to the largest: 1 is linear, 2 the square
 *
 * The API runs in its own process as in production (api-server.ts: the API alone, no worker), on
 * a bundled PostgreSQL (or DATABASE_URL). Also reported: the slowest `/health` answer seen while
 * the 1 MiB bodies were sent (polled every 20 ms from this process).
 *
 *   npm run --silent bench -- hostile      (last line: one JSON object; progress on stderr)
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPool } from '@imagegen/db';
import { createOwner, migrate } from '@imagegen/server';
import { freePort, HOSTILE_SHAPES, type HostileShape } from '@imagegen/server/testing';
import { benchDatabase } from './bench-database.ts';
import { spawnServer, stopServer } from './child-server.ts';
import { sampleCpu } from './cpu-time.ts';
import { median } from './percentile.ts';
import { pollSlowest } from './poll-slowest.ts';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const SIZES = [10_000, 100_000, 1_000_000];
const LARGEST_QUERY = 12_000;

const note = (line: string) => console.error(`[bench hostile] ${line}`);

async function send(api: string, key: string, shape: HostileShape, text: string): Promise<number> {
  const headers = { 'API-Key': key, 'content-type': shape.contentType ?? 'application/json' };
  const response =
    shape.method === 'GET'
      ? await fetch(`${api}${text}`, { headers })
      : await fetch(`${api}${shape.path}`, { method: 'POST', headers, body: text });
  await response.arrayBuffer();
  return response.status;
}

export default async function main(): Promise<void> {
  const db = await benchDatabase('bench_hostile');
  const filesDir = await mkdtemp(path.join(tmpdir(), 'imagegen-bench-hostile-'));
  let server: ChildProcess | undefined;
  try {
    const pool = createPool(db.url, { max: 2, applicationName: 'bench-driver' });
    await migrate(pool);
    const { apiKey } = await createOwner(pool, { name: 'bench-hostile', plan: 'UNLIMITED' });
    await pool.end();
    const port = await freePort();
    server = (await spawnServer('api-server.ts', [String(port), db.url, filesDir])).child;
    const pid = server.pid!;
    const api = `http://127.0.0.1:${port}`;
    const cpuMs = () => (sampleCpu({ server: () => [pid] }).server ?? Number.NaN) / 1000;

    const shapes: Record<string, unknown> = {};
    let worstExponent = 0;
    let worstCpuMs = 0;
    for (const shape of HOSTILE_SHAPES) {
      const sizes = SIZES.filter((size) => shape.method === 'POST' || size <= LARGEST_QUERY);
      if (shape.method === 'GET') sizes.push(LARGEST_QUERY);
      const rows: Record<string, { cpu_ms: number; ms: number }> = {};
      for (const size of sizes) {
        const text = shape.build(size);
        await send(api, apiKey, shape, text); // warm: the thread, the validator, the JIT
        const cpu: number[] = [];
        const wall: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const before = cpuMs();
          const start = performance.now();
          const status = await send(api, apiKey, shape, text);
          wall.push(performance.now() - start);
          cpu.push(cpuMs() - before);
          if (status !== shape.status)
            throw new Error(`${shape.name}: HTTP ${status}, expected ${shape.status}`);
        }
        rows[`${Math.round(size / 1000)}KB`] = {
          cpu_ms: Math.round(median(cpu)),
          ms: Math.round(median(wall)),
        };
        worstCpuMs = Math.max(worstCpuMs, median(cpu));
      }
      const first = rows[`${Math.round(sizes[0]! / 1000)}KB`]!;
      const last = rows[`${Math.round(sizes.at(-1)! / 1000)}KB`]!;
      // Below a few ms the clock ticks (10 ms) and the request's fixed cost hide the growth.
      const exponent =
        sizes.length > 1 && last.cpu_ms >= 20
          ? Math.log(Math.max(1, last.cpu_ms) / Math.max(1, first.cpu_ms)) /
            Math.log(sizes.at(-1)! / sizes[0]!)
          : null;
      if (exponent !== null) worstExponent = Math.max(worstExponent, exponent);
      shapes[shape.name] = { ...rows, exponent: exponent === null ? null : Math.round(exponent * 100) / 100 };
      note(`${shape.name}: ${JSON.stringify(shapes[shape.name])}`);
    }

    note('the 1 MiB bodies at once, with /health polled');
    const poll = pollSlowest(`${api}/health`);
    await Promise.all(
      HOSTILE_SHAPES.filter((shape) => shape.method === 'POST').map((shape) =>
        send(api, apiKey, shape, shape.build(SIZES.at(-1)!)),
      ),
    );
    const slowestHealthMs = await poll.stop();
    console.log(
      JSON.stringify({
        rounds: ROUNDS,
        worst_exponent: Math.round(worstExponent * 100) / 100,
        worst_cpu_ms: Math.round(worstCpuMs),
        slowest_health_ms_under_1mib_bodies: slowestHealthMs,
        shapes,
      }),
    );
  } finally {
    if (server) await stopServer(server);
    await db.cleanup();
    await rm(filesDir, { recursive: true, force: true });
  }
}
