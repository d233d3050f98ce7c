/**
 * How the fleet scales on one PostgreSQL, each figure a ratio to the single process measured in
 * the same run:
 *
 *   submit: POST /sd/text2image/v1 at 64 connections against 1 API process, then the same 64
 *           spread over 2 API processes (32 each)
 *   claim:  2,000 queued sandbox tasks (zero run time, 64 × 64 images) drained by 1, 2 and 4
 *           worker processes
 *
 *   npm run --silent bench -- fleet      (last line: one JSON object; progress on stderr)
 *
 * Every API and worker is the real program (`packages/app/src/start.ts` with
 * IMAGEGEN_ROLES=api or worker, default settings, JSON logs at info) in its own process, started
 * with bench/child-server.ts. PostgreSQL is durable (fsync on), bundled in a temporary directory
 * unless DATABASE_URL is set. Outputs go to a local folder shared by the workers (one machine).
 *
 * Claim phase: the tasks are queued and parked (run_at in an hour) before the workers start;
 * once every worker is ready they are released in one statement and a NOTIFY, and the phase lasts
 * until the last one succeeded. A sandbox worker runs one task at a time (its engine has no
 * servers), so one worker's rate is bound by its round trips to PostgreSQL, not by CPU.
 *
 * cpu_cores says, per phase, how many cores each process group kept busy on average (CPU time
 * from /proc over wall time; the client is this process, autocannon's) and the whole machine
 * (`machine`, every process, ours or not); `bottleneck` names what saturated: the machine's cores
 * when nearly all are busy (saying how much of that is the benchmark's), else one process's event
 * loop near a full core, else none (the figure is latency-bound). BENCH_ROUNDS (3) alternating submit rounds of
 * BENCH_SECONDS (5) each; figures are medians over the rounds.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createPool, type Pool } from '@imagegen/db';
import { createOwner, migrate, submitTask } from '@imagegen/server';
import { freePort } from '@imagegen/server/testing';
import autocannon from 'autocannon';
import { benchDatabase } from './bench-database.ts';
import { spawnServer, stopServer } from './child-server.ts';
import { type CpuGroups, machineBusyUs, postgresPids, sampleCpu } from './cpu-time.ts';
import { median } from './percentile.ts';

const START = '../packages/app/src/start.ts';
const CONNECTIONS = 64;
const CLAIM_TASKS = Number(process.env.BENCH_CLAIM_TASKS ?? 2000);
const WORKER_COUNTS = [1, 2, 4];
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const PIPELINE = '/sd/text2image/v1';
// Small images: the claim phases measure the queue, not the sandbox's drawing.
const BODY = JSON.stringify({ prompt: 'a fleet', negative_prompt: 'fog', width: 64, height: 64, samples: 1 });
const CORES = availableParallelism();

const note = (line: string) => console.error(`[bench fleet] ${line}`);
const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
const round2 = (n: number) => Math.round(n * 100) / 100;

interface Measured {
  /** Requests or claims per second. */
  rate: number;
  /** Average cores busy per process group over the phase, and on the whole machine (`machine`). */
  cpu_cores: Record<string, number> | null;
}

/** Runs `work` between two CPU samples; answers its count per second and the cores each group used. */
async function measure(groups: CpuGroups, work: () => Promise<number>): Promise<Measured> {
  const before: Record<string, number | null> = { ...sampleCpu(groups), machine: machineBusyUs() };
  const started = performance.now();
  const count = await work();
  const seconds = (performance.now() - started) / 1000;
  const after: Record<string, number | null> = { ...sampleCpu(groups), machine: machineBusyUs() };
  let cores: Record<string, number> | null = {};
  for (const [name, start] of Object.entries(before)) {
    const end = after[name];
    if (start === null || end === null || end === undefined) cores = null;
    else if (cores) cores[name] = round2((end - start) / 1e6 / seconds);
  }
  return { rate: Math.round(count / seconds), cpu_cores: cores };
}

/** What limited a phase, from the cores each group kept busy. */
function bottleneck(cores: Record<string, number> | null): string {
  if (!cores) return 'unknown (no /proc)';
  const { machine = 0, ...own } = cores;
  const entries = Object.entries(own).sort((a, b) => b[1] - a[1]);
  const ours = round2(entries.reduce((sum, [, c]) => sum + c, 0));
  const [top, topCores] = entries[0]!;
  if (machine >= 0.85 * CORES) {
    return (
      `the machine's ${CORES} CPU cores (${machine} busy: ${ours} in the benchmark's processes, ` +
      `most in ${top} with ${topCores}; ${round2(machine - ours)} in other work on the machine)`
    );
  }
  if (topCores >= 0.85 && top !== 'postgres') return `${top}'s event loop (${topCores} of one core)`;
  return `latency, no CPU saturated (${machine} of ${CORES} cores busy, ${ours} in the benchmark)`;
}

function startRole(
  env: NodeJS.ProcessEnv,
  role: 'api' | 'worker',
  port: number,
): Promise<{ child: ChildProcess }> {
  const roleEnv =
    role === 'api'
      ? { IMAGEGEN_ROLES: 'api', API_PORT: String(port) }
      : { IMAGEGEN_ROLES: 'worker', HEALTH_PORT: String(port) };
  return spawnServer(START, [], 'ignore', {
    env: { ...env, ...roleEnv },
    // The API's banner ends with its curl lines; a worker logs `ready` once its engines run.
    ready: (line) => (role === 'api' ? line.includes('status/<id>') : line.includes('ready: worker')),
  });
}

async function submitPhase(urls: string[], seconds: number, key: string): Promise<number> {
  const results = await Promise.all(
    urls.map((url) =>
      autocannon({
        url: `${url}${PIPELINE}`,
        method: 'POST',
        connections: CONNECTIONS / urls.length,
        duration: seconds,
        headers: { 'API-Key': key, 'content-type': 'application/json' },
        body: BODY,
      }),
    ),
  );
  for (const result of results) {
    if (result.non2xx + result.errors > 0)
      throw new Error(`submit phase: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return results.reduce((sum, result) => sum + result['2xx'], 0);
}

/** Queues `count` tasks that no worker may claim yet (run_at an hour ahead). */
async function queueParked(pool: Pool, ownerId: string, count: number): Promise<void> {
  const input = JSON.parse(BODY) as Record<string, unknown>;
  await Promise.all(
    Array.from({ length: count }, () =>
      submitTask(pool, {
        ownerId,
        endpoint: PIPELINE,
        kind: 'generation',
        input,
        publicUrl: 'http://bench.invalid',
      }),
    ),
  );
  await pool.query(
    `UPDATE tasks SET run_at = now() + interval '1 hour' WHERE owner_id = $1 AND state = 'queued'`,
    [ownerId],
  );
}

async function claimPhase(pool: Pool, ownerId: string): Promise<number> {
  await pool.query(`UPDATE tasks SET run_at = now() WHERE owner_id = $1 AND state = 'queued'`, [ownerId]);
  await pool.query(`SELECT pg_notify('imagegen_tasks', '')`);
  for (;;) {
    const { rows } = await pool.query<{ open: string }>(
      `SELECT count(*) AS open FROM tasks WHERE owner_id = $1 AND state IN ('queued', 'running')`,
      [ownerId],
    );
    if (Number(rows[0]!.open) === 0) return CLAIM_TASKS;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export default async function main(): Promise<Record<string, unknown>> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const db = await benchDatabase('bench_fleet');
  const dataDir = await mkdtemp(path.join(tmpdir(), 'imagegen-bench-fleet-'));
  const children: ChildProcess[] = [];
  try {
    const pool = createPool(db.url, { max: 8, applicationName: 'bench-driver' });
    await migrate(pool);
    const owner = await createOwner(pool, { name: 'bench-fleet', plan: 'UNLIMITED' });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: db.url,
      IMAGEGEN_DATA_DIR: dataDir,
      IMAGEGEN_ENGINES: 'sandbox',
      IMAGEGEN_API_KEY: owner.apiKey,
      DOCS_PORT: String(await freePort()),
    };
    const pgDataDir = db.pgDataDir;
    const postgres: CpuGroups = pgDataDir ? { postgres: () => postgresPids(pgDataDir) } : {};

    note('starting 2 API processes');
    const apiPorts = [await freePort(), await freePort()];
    const apis = await Promise.all(apiPorts.map((port) => startRole(env, 'api', port)));
    children.push(...apis.map((api) => api.child));
    const urls = apiPorts.map((port) => `http://127.0.0.1:${port}`);
    const submitCpu = (n: number): CpuGroups => ({
      ...Object.fromEntries(apis.slice(0, n).map((api, i) => [`api_${i + 1}`, () => [api.child.pid!]])),
      ...postgres,
      client: () => ['self'],
    });
    note('warming up');
    await submitPhase(urls, 2, owner.apiKey);
    const submit: { one: Measured; two: Measured }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      note(`round ${round}/${ROUNDS}: submit through 1 API, then 2 APIs (${seconds} s each)`);
      const one = await measure(submitCpu(1), () => submitPhase(urls.slice(0, 1), seconds, owner.apiKey));
      const two = await measure(submitCpu(2), () => submitPhase(urls, seconds, owner.apiKey));
      submit.push({ one, two });
    }
    for (const child of children.splice(0)) await stopServer(child);
    // The submit phases' tasks (never claimed, so nothing refers to them) are not for the workers.
    await pool.query(`DELETE FROM tasks WHERE owner_id = $1`, [owner.owner.id]);

    const claims: Record<number, Measured> = {};
    for (const count of WORKER_COUNTS) {
      note(`claim: ${CLAIM_TASKS} tasks, ${count} worker process(es)`);
      // An owner per phase: its tasks, and only they, are the phase's.
      const phase = await createOwner(pool, { name: `bench-claim-${count}`, plan: 'UNLIMITED' });
      await queueParked(pool, phase.owner.id, CLAIM_TASKS);
      const workers = await Promise.all(
        Array.from({ length: count }, async () => startRole(env, 'worker', await freePort())),
      );
      children.push(...workers.map((worker) => worker.child));
      const groups: CpuGroups = {
        ...Object.fromEntries(workers.map((worker, i) => [`worker_${i + 1}`, () => [worker.child.pid!]])),
        ...postgres,
      };
      claims[count] = await measure(groups, () => claimPhase(pool, phase.owner.id));
      for (const child of children.splice(0)) await stopServer(child);
    }
    await pool.end();

    const middle = <T>(items: T[], rate: (item: T) => number) =>
      items.find((item) => rate(item) === median(items.map(rate))) ?? items[0]!;
    const submitOne = middle(
      submit.map((r) => r.one),
      (m) => m.rate,
    );
    const submitTwo = middle(
      submit.map((r) => r.two),
      (m) => m.rate,
    );
    const figures = {
      cores: CORES,
      connections: CONNECTIONS,
      seconds_per_phase: seconds,
      rounds: ROUNDS,
      submit_rps_1_api: median(submit.map((r) => r.one.rate)),
      submit_rps_2_apis: median(submit.map((r) => r.two.rate)),
      submit_ratio_2_apis: median(submit.map((r) => ratio(r.two.rate, r.one.rate))),
      submit_cpu_cores: { one_api: submitOne.cpu_cores, two_apis: submitTwo.cpu_cores },
      submit_bottleneck: {
        one_api: bottleneck(submitOne.cpu_cores),
        two_apis: bottleneck(submitTwo.cpu_cores),
      },
      claim_tasks: CLAIM_TASKS,
      claims_per_s: Object.fromEntries(WORKER_COUNTS.map((n) => [`workers_${n}`, claims[n]!.rate])),
      claim_ratio: Object.fromEntries(
        WORKER_COUNTS.map((n) => [`workers_${n}`, ratio(claims[n]!.rate, claims[1]!.rate)]),
      ),
      claim_cpu_cores: Object.fromEntries(WORKER_COUNTS.map((n) => [`workers_${n}`, claims[n]!.cpu_cores])),
      claim_bottleneck: Object.fromEntries(
        WORKER_COUNTS.map((n) => [`workers_${n}`, bottleneck(claims[n]!.cpu_cores)]),
      ),
      load_average_1m: round2(loadavg()[0]!),
    };
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    // Servers first: the bundled PostgreSQL stops only once nothing is connected.
    await Promise.all(children.map(stopServer));
    await db.cleanup();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
