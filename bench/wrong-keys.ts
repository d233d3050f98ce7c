/**
 * One client address sending wrong API keys as fast as 32 connections allow, while 32 more
 * connections from the same address poll a status path with a valid key:
 *
 *   wrong_key: answers per second, by status (401 while the address has allowance, 429 after)
 *   valid_key: answers per second by status (every one must be 2xx/404, never 401 or 429)
 *
 *   npm run --silent bench -- wrong-keys      (last line: one JSON object; progress on stderr)
 *
 * The API runs in its own process (bench/api-server.ts, the default limits) on a bundled
 * PostgreSQL in a temporary directory, or DATABASE_URL. BENCH_SECONDS (5) of load.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createPool } from '@imagegen/db';
import { createOwner, migrate } from '@imagegen/server';
import { freePort } from '@imagegen/server/testing';
import autocannon from 'autocannon';
import { benchDatabase } from './bench-database.ts';
import { spawnServer, stopServer } from './child-server.ts';

const CONNECTIONS = 32;
const WRONG_KEY = 'ig_0123456789abcdefghijABCDEFGHIJ01';
/** A task id nobody has: the valid key's poll is authenticated, then answered 404. */
const STATUS_PATH = '/sd/text2image/v1/status/00000000-0000-0000-0000-000000000000';

const note = (line: string) => console.error(`[bench wrong-keys] ${line}`);

interface Load {
  rps: number;
  by_status: Record<string, number>;
  p50_ms: number;
  p99_ms: number;
}

async function load(url: string, key: string, seconds: number): Promise<Load> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'API-Key': key },
  });
  return {
    rps: Math.round(result.requests.total / result.duration),
    by_status: Object.fromEntries(
      Object.entries(result.statusCodeStats).map(([status, { count }]) => [status, count]),
    ),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
  };
}

export default async function main(): Promise<Record<string, unknown>> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const db = await benchDatabase('bench_wrong_keys');
  const filesDir = await mkdtemp(path.join(tmpdir(), 'imagegen-bench-files-'));
  const pool = createPool(db.url, { max: 2, applicationName: 'bench-driver' });
  let child: Awaited<ReturnType<typeof spawnServer>>['child'] | null = null;
  try {
    await migrate(pool);
    const owner = await createOwner(pool, { name: 'bench-wrong-keys', plan: 'UNLIMITED' });
    const port = await freePort();
    child = (await spawnServer('api-server.ts', [String(port), db.url, filesDir])).child;
    const url = `http://127.0.0.1:${port}${STATUS_PATH}`;
    note('warming up');
    await load(url, owner.apiKey, 1);
    note(`wrong and valid keys from one address at once (${seconds} s)`);
    const [wrong, valid] = await Promise.all([
      load(url, WRONG_KEY, seconds),
      load(url, owner.apiKey, seconds),
    ]);
    const figures = {
      connections_each: CONNECTIONS,
      seconds,
      wrong_key: wrong,
      valid_key: valid,
      targets: {
        valid_key_never_refused: !valid.by_status['401'] && !valid.by_status['429'],
      },
    };
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    if (child) await stopServer(child);
    await pool.end();
    await rm(filesDir, { recursive: true, force: true });
    await db.cleanup();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
