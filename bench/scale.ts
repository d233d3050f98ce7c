/**
 * The queue at scale: the same measures on an empty database and on one holding BENCH_SCALE_TASKS
 * (2,000,000) finished tasks, reported as ratios (filled over empty), and a retention sweep of one
 * day's worth of them.
 *
 *   npm run --silent bench -- scale      (last line: one JSON object; progress on stderr)
 *
 * One durable PostgreSQL (bench-database.ts, or DATABASE_URL: then use a throwaway database, the
 * rows stay). The measures run first on the empty, migrated database, then again after the fill:
 *
 *   submit: submitTask one caller at a time (p50, p99), and durable submissions per second with 64
 *     callers (bench/dispatch.ts);
 *   claim: submit-to-claim latency through a real worker woken by NOTIFY (bench/dispatch.ts);
 *   status: TaskStatusReader.read, the API's status read, one at a time (p50, p99) over 1,000 tasks
 *     drawn at random from the table, and reads per second with 64 callers.
 *
 * The fill is set-based (INSERT ... SELECT generate_series, BENCH_SCALE_BATCH rows a statement):
 * 20 owners, 5 endpoints, one task in ten failed with an error, the others succeeded with a result,
 * an output key and their row in `images`; finish times spread evenly over the last 60 days, and
 * an Idempotency-Key for one task in ten of the last day. Then VACUUM ANALYZE, as autovacuum would.
 *
 * The sweep: sweepExpired with tasks and outputs kept 59 days, so exactly the oldest day's tasks
 * and images expire (1/60 of the fill), timed to the end, files through a store that only counts.
 * Functions are the ones the API and the worker call, without HTTP around them: bench/api.ts
 * measures what HTTP adds, and it does not grow with the table.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createPool, type Pool } from '@imagegen/db';
import { migrate, submitTask, sweepExpired, TaskStatusReader } from '@imagegen/server';
import { benchDatabase } from './bench-database.ts';
import { type DispatchFigures, measureDispatch } from './dispatch.ts';
import { percentile } from './percentile.ts';

const TASKS = Math.max(60_000, Number(process.env.BENCH_SCALE_TASKS ?? 2_000_000));
const BATCH = Math.max(10_000, Number(process.env.BENCH_SCALE_BATCH ?? 100_000));
const DAYS = 60;
const OWNERS = 20;
const ENDPOINTS = [
  '/sd/text2image/v1',
  '/sd/image2image/v1',
  '/sdxl/text2image/v1',
  '/upscale/v1',
  '/remove_background/v1',
];
const PUBLIC_URL = 'http://bench.invalid';

const note = (line: string) => console.error(`[bench scale] ${line}`);

interface Measures {
  submit_p50_ms: number;
  submit_p99_ms: number;
  submit_per_s: number;
  claim_p50_ms: number;
  claim_p99_ms: number;
  status_p50_ms: number;
  status_p99_ms: number;
  status_per_s: number;
}

async function measure(url: string, pool: Pool): Promise<Measures> {
  const owner = (
    await pool.query<{ id: string }>(
      `INSERT INTO owners (name, webhook_secret) VALUES ('bench-scale-measure', 'whsec_bench') RETURNING id`,
    )
  ).rows[0]!.id;
  try {
    const submit = () =>
      submitTask(pool, {
        ownerId: owner,
        endpoint: ENDPOINTS[0]!,
        kind: 'generation',
        input: { prompt: 'bench', seed: 1 },
        publicUrl: PUBLIC_URL,
      });
    const submits: number[] = [];
    for (let n = 0; n < 320; n++) {
      const start = performance.now();
      await submit();
      if (n >= 20) submits.push(performance.now() - start);
    }
    // Status reads of tasks drawn at random: the 300 just submitted on the empty database, any
    // of the table's after the fill.
    const { rows: targets } = await pool.query<{ id: string; owner_id: string }>(
      'SELECT id, owner_id FROM tasks ORDER BY random() LIMIT 1000',
    );
    const reader = new TaskStatusReader(pool);
    const reads: number[] = [];
    for (const [n, task] of targets.entries()) {
      const start = performance.now();
      const status = await reader.read(task.owner_id, task.id);
      if (!status) throw new Error(`task ${task.id} not found`);
      if (n >= 20) reads.push(performance.now() - start);
    }
    let count = 0;
    const until = performance.now() + 3000;
    const began = performance.now();
    await Promise.all(
      Array.from({ length: 64 }, async (_, lane) => {
        for (let n = lane; performance.now() < until; n += 64) {
          const task = targets[n % targets.length]!;
          await reader.read(task.owner_id, task.id);
          count += 1;
        }
      }),
    );
    const statusSeconds = (performance.now() - began) / 1000;

    // Leave no queued task behind for the dispatch measure's worker.
    await pool.query('DELETE FROM tasks WHERE owner_id = $1', [owner]);
    const dispatch: DispatchFigures = await measureDispatch({ databaseUrl: url, samples: 300 });
    return {
      submit_p50_ms: round(percentile(submits, 50)),
      submit_p99_ms: round(percentile(submits, 99)),
      submit_per_s: dispatch.submit_direct_per_s,
      claim_p50_ms: dispatch.dispatch_p50_ms,
      claim_p99_ms: dispatch.dispatch_p99_ms,
      status_p50_ms: round(percentile(reads, 50)),
      status_p99_ms: round(percentile(reads, 99)),
      status_per_s: Math.round(count / statusSeconds),
    };
  } finally {
    await pool.query('DELETE FROM owners WHERE id = $1', [owner]);
  }
}

/** Fills the database with `TASKS` finished tasks ending over the last 60 days before `anchor`. */
async function fill(pool: Pool, anchor: Date): Promise<void> {
  const owners = (
    await pool.query<{ id: string }>(
      `INSERT INTO owners (name, webhook_secret)
       SELECT 'bench-scale-' || n, 'whsec_bench' FROM generate_series(1, $1) AS n RETURNING id`,
      [OWNERS],
    )
  ).rows.map((row) => row.id);
  const began = performance.now();
  for (let from = 0; from < TASKS; from += BATCH) {
    const to = Math.min(TASKS, from + BATCH) - 1;
    // Task n finished (60 days) * (1 - n / TASKS) before the anchor: the oldest first, as they came.
    await pool.query(
      `WITH made AS (
         SELECT n, $3::uuid[] AS owners, $4::text[] AS endpoints,
                $5::timestamptz - make_interval(secs => ($6::float8 * 86400) * (1 - n::float8 / $7)) AS ended,
                substr(md5(n::text), 1, 22) AS folder
         FROM generate_series($1::int, $2::int) AS n),
       tasks_made AS (
         INSERT INTO tasks (owner_id, endpoint, kind, input, state, target_pool, attempts, result, error,
           output_keys, created_at, started_at, finished_at, progress)
         SELECT owners[1 + n % ${OWNERS}], endpoints[1 + n % ${ENDPOINTS.length}], 'generation',
           jsonb_build_object('prompt', 'a lighthouse at dawn, watercolour, number ' || n,
             'negative_prompt', 'blurry, low quality', 'width', 512, 'height', 512, 'samples', 1,
             'seed', n, 'steps', 30, 'guidance_scale', 7.5),
           CASE WHEN n % 10 = 0 THEN 'failed' ELSE 'succeeded' END, 'shared', 1,
           CASE WHEN n % 10 = 0 THEN NULL ELSE jsonb_build_object('meta', jsonb_build_object('seed', n)) END,
           CASE WHEN n % 10 = 0 THEN 'the engine ran out of memory' END,
           CASE WHEN n % 10 = 0 THEN '{}'::text[] ELSE ARRAY[folder || '/0.png'] END,
           ended - interval '40 seconds', ended - interval '30 seconds', ended, 1
         FROM made
         RETURNING id, owner_id, endpoint, input, output_keys, finished_at)
       INSERT INTO images (owner_id, task_id, blob_key, download_url, json, creation_timestamp)
       SELECT owner_id, id, output_keys[1], '${PUBLIC_URL}/files/' || output_keys[1],
         jsonb_build_object('endpoint', endpoint, 'input', input, 'seed', input->'seed'), finished_at
       FROM tasks_made WHERE cardinality(output_keys) > 0`,
      [from, to, owners, ENDPOINTS, anchor, DAYS, TASKS],
    );
    const done = to + 1;
    const seconds = (performance.now() - began) / 1000;
    note(`filled ${done} of ${TASKS} tasks (${Math.round(done / seconds)} a second)`);
  }
  // Idempotency-Keys live 24 hours: one task in ten of the last day took one.
  await pool.query(
    `INSERT INTO idempotency_keys (owner_id, idempotency_key, request_hash, task_id, created_at)
     SELECT owner_id, 'key-' || id, 'hash', id, created_at FROM tasks
     WHERE finished_at > $1::timestamptz - interval '1 day' AND random() < 0.1`,
    [anchor],
  );
}

export interface ScaleFigures {
  tasks: number;
  fill_seconds: number;
  database_mib: number;
  empty: Measures;
  filled: Measures;
  /** filled / empty for each measure: latencies above 1 and rates below 1 are the cost of size. */
  ratio: Record<keyof Measures, number>;
  sweep_day_tasks: number;
  sweep_day_outputs: number;
  sweep_day_seconds: number;
  sweep_rows_per_s: number;
  load_average_1m: number;
}

/** `npm run --silent bench -- scale`: own database unless DATABASE_URL, figures as JSON last. */
export default async function main(): Promise<ScaleFigures> {
  const { url, cleanup } = await benchDatabase('bench_scale');
  const pool = createPool(url, { max: 8, applicationName: 'bench-scale' });
  try {
    await migrate(pool);
    note('measuring on the empty database');
    const empty = await measure(url, pool);
    note(JSON.stringify(empty));

    const anchor = new Date();
    note(`filling ${TASKS} tasks, ${BATCH} a statement`);
    const fillBegan = performance.now();
    await fill(pool, anchor);
    note('VACUUM ANALYZE');
    await pool.query('VACUUM ANALYZE');
    const fillSeconds = (performance.now() - fillBegan) / 1000;
    const size = (await pool.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes'))
      .rows[0]!.bytes;

    note('measuring on the filled database');
    const filled = await measure(url, pool);
    note(JSON.stringify(filled));

    note('sweeping the oldest day');
    let deletes = 0;
    const sweepBegan = performance.now();
    const swept = await sweepExpired({
      pool,
      store: {
        put: async () => {},
        get: async () => null,
        delete: async () => {
          deletes += 1;
        },
      },
      policy: {
        outputs: DAYS - 1,
        uploads: null,
        tasks: DAYS - 1,
        webhookAttempts: null,
        analytics: null,
        usage: null,
      },
      now: anchor,
    });
    const sweepSeconds = (performance.now() - sweepBegan) / 1000;
    if (deletes !== swept.outputs)
      throw new Error(`${swept.outputs} outputs swept but ${deletes} files deleted`);

    const ratio = Object.fromEntries(
      (Object.keys(empty) as (keyof Measures)[]).map((key) => [
        key,
        Math.round((filled[key] / empty[key]) * 100) / 100,
      ]),
    ) as Record<keyof Measures, number>;
    const figures: ScaleFigures = {
      tasks: TASKS,
      fill_seconds: Math.round(fillSeconds),
      database_mib: Math.round(Number(size) / 1024 / 1024),
      empty,
      filled,
      ratio,
      sweep_day_tasks: swept.tasks,
      sweep_day_outputs: swept.outputs,
      sweep_day_seconds: Math.round(sweepSeconds * 100) / 100,
      sweep_rows_per_s: Math.round((swept.tasks + swept.outputs) / sweepSeconds),
      load_average_1m: Math.round(loadavg()[0]! * 100) / 100,
    };
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    await pool.end();
    await cleanup();
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
