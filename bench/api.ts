/**
 * API throughput and latency at 64 connections, each measured in the same run against a bare
 * node:http server answering constant JSON on this machine, and reported as ratios:
 *
 *   submit: POST /sd/text2image/v1 (auth, contract validation, durable group-committed INSERT)
 *   status: GET /sd/text2image/v1/status/{id} (auth, owner-scoped read)
 *
 * plus the submit-to-claim dispatch latency (bench/dispatch.ts) on the same database.
 *
 *   npm run --silent bench -- api      (last line: one JSON object; progress on stderr)
 *
 * The API and the bare server each run in their own process; autocannon drives them from this
 * one, sending both the same requests (paths, API-Key header, body). PostgreSQL is durable (fsync on): every acknowledged task is committed, and the run checks
 * that each acknowledged submission is in the table. Uses DATABASE_URL when set, otherwise a
 * bundled PostgreSQL in a temporary directory. BENCH_ROUNDS (3) alternating rounds of BENCH_SECONDS
 * (5) per phase; figures are medians over the rounds. load_average_1m says how busy the machine was.
 *
 * cpu_us_per_request splits each phase's CPU per request between the server, PostgreSQL and the
 * load generator (from /proc, Linux only). They all share the machine's cores, so the bare
 * phase's total over the API's is the highest ratio the API could reach with every core busy:
 * submit_ratio_cpu_bound and status_ratio_cpu_bound.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createPool } from '@imagegen/db';
import { createOwner, HOT_PATH_BUDGET_US, migrate } from '@imagegen/server';
import { freePort } from '@imagegen/server/testing';
import autocannon from 'autocannon';
import { benchDatabase } from './bench-database.ts';
import { spawnServer, stopServer } from './child-server.ts';
import { type CpuGroups, cpuPerRequest, postgresPids, sampleCpu } from './cpu-time.ts';
import { measureDispatch } from './dispatch.ts';
import { median } from './percentile.ts';

const CONNECTIONS = 64;
/** Distinct tasks the status phase polls. */
const STATUS_TASKS = 1000;
/** Alternating rounds of yardstick and API (BENCH_ROUNDS). */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const SUBMIT_PATH = '/sd/text2image/v1';
const SUBMIT_BODY = JSON.stringify({
  prompt: 'a lighthouse at dawn, watercolour, soft light',
  negative_prompt: 'blurry, low quality',
  width: 512,
  height: 512,
  samples: 1,
});

const note = (line: string) => console.error(`[bench api] ${line}`);

interface Phase {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** CPU microseconds per request of the server, PostgreSQL and this load generator (Linux). */
  cpu_us: Record<string, number> | null;
}

async function load(
  url: string,
  method: 'GET' | 'POST',
  seconds: number,
  cpu: CpuGroups,
  headers: Record<string, string> = {},
  body?: string,
  paths?: readonly string[],
): Promise<Phase> {
  const before = sampleCpu(cpu);
  const result = await autocannon({
    url,
    method,
    connections: CONNECTIONS,
    duration: seconds,
    headers: body ? { ...headers, 'content-type': 'application/json' } : headers,
    ...(body ? { body } : {}),
    ...(paths ? { requests: paths.map((path) => ({ method, path })) } : {}),
  });
  return {
    rps: Math.round(result.requests.total / result.duration),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    cpu_us: cpuPerRequest(before, sampleCpu(cpu), result.requests.total),
  };
}

const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

export default async function main(): Promise<Record<string, unknown>> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const db = await benchDatabase('bench_api');
  const children: ChildProcess[] = [];
  const filesDir = await mkdtemp(path.join(tmpdir(), 'imagegen-bench-files-'));
  try {
    const pool = createPool(db.url, { max: 4, applicationName: 'bench-driver' });
    await migrate(pool);
    const owner = await createOwner(pool, { name: 'bench-api', plan: 'UNLIMITED' });
    const auth = { 'API-Key': owner.apiKey };
    const count = async () =>
      Number(
        (await pool.query('SELECT count(*) FROM tasks WHERE owner_id = $1', [owner.owner.id])).rows[0].count,
      );

    const apiPort = await freePort();
    const barePort = await freePort();
    const { child: apiServer } = await spawnServer('api-server.ts', [String(apiPort), db.url, filesDir]);
    const { child: bareServer } = await spawnServer('bare-server.ts', [String(barePort)]);
    children.push(apiServer, bareServer);
    // Where each request's CPU goes (PostgreSQL only when it runs here, from our data directory).
    const pgDataDir = db.pgDataDir;
    const apiCpu: CpuGroups = {
      server: () => [apiServer.pid!],
      ...(pgDataDir ? { postgres: () => postgresPids(pgDataDir) } : {}),
      client: () => ['self'],
    };
    const bareCpu: CpuGroups = { server: () => [bareServer.pid!], client: () => ['self'] };
    const api = `http://127.0.0.1:${apiPort}`;
    const bare = `http://127.0.0.1:${barePort}`;

    note('warming up');
    await load(`${bare}${SUBMIT_PATH}`, 'POST', 2, bareCpu, auth, SUBMIT_BODY);
    await load(`${api}${SUBMIT_PATH}`, 'POST', 2, apiCpu, auth, SUBMIT_BODY);
    await load(`${bare}${SUBMIT_PATH}/status/warm-up`, 'GET', 2, bareCpu, auth);

    // Polls spread over many tasks (each connection cycles through all of them), as real clients
    // poll their own tasks: no single hot row. Submissions of the first round provide them.
    let statusPaths: string[] = [];
    const rounds: { bareSubmit: Phase; submit: Phase; stored: number; bareStatus: Phase; status: Phase }[] =
      [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Each round measures the yardstick right beside the API, so a machine whose load drifts
      // (other work on the same cores) shifts both; the figures are the medians over rounds.
      note(`round ${round}/${ROUNDS}: bare POST, API submit, bare GET, API status (${seconds} s each)`);
      // The yardstick gets the very requests the API gets (path, API-Key header, body), so the
      // client's work per request is the same on both sides; only the server differs.
      const bareSubmit = await load(`${bare}${SUBMIT_PATH}`, 'POST', seconds, bareCpu, auth, SUBMIT_BODY);
      const before = await count();
      const submit = await load(`${api}${SUBMIT_PATH}`, 'POST', seconds, apiCpu, auth, SUBMIT_BODY);
      const stored = (await count()) - before;
      if (statusPaths.length === 0) {
        const { rows } = await pool.query<{ id: string }>(
          'SELECT id FROM tasks WHERE owner_id = $1 ORDER BY random() LIMIT $2',
          [owner.owner.id, STATUS_TASKS],
        );
        statusPaths = rows.map((row) => `${SUBMIT_PATH}/status/${row.id}`);
      }
      const bareStatus = await load(bare, 'GET', seconds, bareCpu, auth, undefined, statusPaths);
      const status = await load(api, 'GET', seconds, apiCpu, auth, undefined, statusPaths);
      rounds.push({ bareSubmit, submit, stored, bareStatus, status });
    }
    const med = (pick: (r: (typeof rounds)[number]) => number) => median(rounds.map(pick));
    // Per process, the median over rounds of CPU microseconds per request.
    const cpu = (pick: (r: (typeof rounds)[number]) => Phase) => {
      const phases = rounds.map(pick);
      if (phases.some((phase) => phase.cpu_us === null)) return null;
      const names = Object.keys(phases[0]!.cpu_us!);
      const split = Object.fromEntries(
        names.map((name) => [name, median(phases.map((p) => p.cpu_us![name]!))]),
      );
      return { ...split, total: sum(Object.values(split)) } as Record<string, number> & { total: number };
    };
    const cpuUs = {
      bare_post: cpu((r) => r.bareSubmit),
      submit: cpu((r) => r.submit),
      bare_get: cpu((r) => r.bareStatus),
      status: cpu((r) => r.status),
    };
    // Client and servers share these cores, so the CPU a request costs caps the ratio: with every
    // core busy in both phases, the ratio is the bare phase's CPU per request over the API's.
    const cpuBound = (bare: { total: number } | null, api: { total: number } | null) =>
      bare && api ? ratio(bare.total, api.total) : null;

    for (const child of children.splice(0)) await stopServer(child);
    await pool.end();
    note('dispatch latency (bench/dispatch.ts)');
    const dispatch = await measureDispatch({ databaseUrl: db.url });

    const figures = {
      connections: CONNECTIONS,
      seconds_per_phase: seconds,
      rounds: ROUNDS,
      bare_post_rps: med((r) => r.bareSubmit.rps),
      submit_rps: med((r) => r.submit.rps),
      submit_ratio: med((r) => ratio(r.submit.rps, r.bareSubmit.rps)),
      submit_p50_ms: med((r) => r.submit.p50_ms),
      submit_p99_ms: med((r) => r.submit.p99_ms),
      submit_acknowledged: sum(rounds.map((r) => r.submit.ok)),
      submit_stored: sum(rounds.map((r) => r.stored)),
      submit_errors: sum(rounds.map((r) => r.submit.non2xx + r.submit.errors)),
      bare_get_rps: med((r) => r.bareStatus.rps),
      status_rps: med((r) => r.status.rps),
      status_ratio: med((r) => ratio(r.status.rps, r.bareStatus.rps)),
      status_p50_ms: med((r) => r.status.p50_ms),
      status_p99_ms: med((r) => r.status.p99_ms),
      status_tasks_polled: statusPaths.length,
      status_errors: sum(rounds.map((r) => r.status.non2xx + r.status.errors)),
      cpu_us_per_request: cpuUs,
      submit_ratio_cpu_bound: cpuBound(cpuUs.bare_post, cpuUs.submit),
      status_ratio_cpu_bound: cpuBound(cpuUs.bare_get, cpuUs.status),
      load_average_1m: Math.round(loadavg()[0]! * 100) / 100,
      dispatch_p50_ms: dispatch.dispatch_p50_ms,
      dispatch_p99_ms: dispatch.dispatch_p99_ms,
      targets: {} as Record<string, boolean>,
    };
    figures.targets = {
      submit_ratio_at_least_0_5: figures.submit_ratio >= 0.5,
      status_ratio_at_least_0_65: figures.status_ratio >= 0.65,
      submit_p99_at_most_10_ms: figures.submit_p99_ms <= 10,
      dispatch_p50_at_most_5_ms: dispatch.dispatch_p50_ms <= 5,
      every_acknowledged_task_stored: figures.submit_stored >= figures.submit_acknowledged,
      [`submit_server_cpu_at_most_${HOT_PATH_BUDGET_US.submit}_us`]:
        (cpuUs.submit?.server ?? Number.POSITIVE_INFINITY) <= HOT_PATH_BUDGET_US.submit,
      [`status_server_cpu_at_most_${HOT_PATH_BUDGET_US.status}_us`]:
        (cpuUs.status?.server ?? Number.POSITIVE_INFINITY) <= HOT_PATH_BUDGET_US.status,
    };
    note(
      `server CPU per request: submit ${cpuUs.submit?.server} µs (budget ${HOT_PATH_BUDGET_US.submit}), ` +
        `status ${cpuUs.status?.server} µs (budget ${HOT_PATH_BUDGET_US.status}); load average ${figures.load_average_1m}`,
    );
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    for (const child of children) await stopServer(child);
    await rm(filesDir, { recursive: true, force: true });
    await db.cleanup();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
