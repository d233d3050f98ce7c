import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { createPool } from '@imagegen/db';
import { createEngineRegistry, type Engine } from '@imagegen/engines';
import { migrate, startWorker, submitTask } from '@imagegen/server';
import { benchDatabase } from './bench-database.ts';
import { percentile } from './percentile.ts';

export interface DispatchFigures {
  dispatch_samples: number;
  /** From the submit call (its durable commit included) until the engine has the task. */
  dispatch_p50_ms: number;
  dispatch_p99_ms: number;
  /** The same, from the moment the submission was acknowledged (committed) instead. */
  dispatch_after_ack_p50_ms: number;
  dispatch_after_ack_p99_ms: number;
  /** Durable submissions per second, 64 concurrent callers, straight into submitTask. */
  submit_direct_per_s: number;
}

export interface DispatchOptions {
  /** A migrated database to use; its tasks table gets benchmark rows in a throwaway owner. */
  databaseUrl: string;
  samples?: number;
  submitSeconds?: number;
}

const PIPELINE = '/sd/text2image/v1';

export async function measureDispatch(options: DispatchOptions): Promise<DispatchFigures> {
  const samples = options.samples ?? 300;
  // Separate pools, as the API and the worker have in production.
  const apiPool = createPool(options.databaseUrl, { max: 8, applicationName: 'bench-api' });
  const workerPool = createPool(options.databaseUrl, { max: 4, applicationName: 'bench-worker' });
  const owner = (
    await apiPool.query<{ id: string }>(
      `INSERT INTO owners (name, webhook_secret) VALUES ('bench-dispatch', 'whsec_bench') RETURNING id`,
    )
  ).rows[0]!.id;

  let claimed: ((at: number) => void) | undefined;
  const engine: Engine = {
    name: 'instant',
    pipelines: [PIPELINE],
    async run() {
      claimed?.(performance.now());
      return { images: [] };
    },
  };
  const stop = new AbortController();
  const worker = startWorker({
    pool: workerPool,
    engines: createEngineRegistry([engine], { enabled: ['instant'], pinned: {} }),
    fetcher: { fetchImage: () => Promise.reject(new Error('no inputs in this benchmark')) },
    store: { put: async () => {}, get: async () => null, delete: async () => {} },
    publicUrl: 'http://bench.invalid',
    signal: stop.signal,
    imageFields: () => [],
    // Only NOTIFY may wake it in time: a poll would hide a missed notification.
    pollMs: 60_000,
  });
  const submit = () =>
    submitTask(apiPool, {
      ownerId: owner,
      endpoint: PIPELINE,
      kind: 'generation',
      input: { prompt: 'bench', seed: 1 },
      publicUrl: 'http://bench.invalid',
    });

  try {
    await submit(); // warm both pools and the prepared statements
    await new Promise((resolve) => setTimeout(resolve, 200));
    const latencies: number[] = [];
    const fromAck: number[] = [];
    for (let n = 0; n < samples + 20; n++) {
      const ran = new Promise<number>((resolve) => {
        claimed = resolve;
      });
      const start = performance.now();
      await submit();
      const acked = performance.now();
      const at = await ran;
      if (n >= 20) {
        latencies.push(at - start);
        fromAck.push(at - acked);
      }
      // Let the worker finish the task so the next one finds an idle slot.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    claimed = undefined;
    stop.abort();
    await worker.stopped;

    const seconds = options.submitSeconds ?? 3;
    let count = 0;
    const until = performance.now() + seconds * 1000;
    const began = performance.now();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (performance.now() < until) {
          await submit();
          count += 1;
        }
      }),
    );
    const elapsed = (performance.now() - began) / 1000;
    return {
      dispatch_samples: latencies.length,
      dispatch_p50_ms: round(percentile(latencies, 50)),
      dispatch_p99_ms: round(percentile(latencies, 99)),
      dispatch_after_ack_p50_ms: round(percentile(fromAck, 50)),
      dispatch_after_ack_p99_ms: round(percentile(fromAck, 99)),
      submit_direct_per_s: Math.round(count / elapsed),
    };
  } finally {
    stop.abort();
    await worker.stopped.catch(() => {});
    await apiPool.query('DELETE FROM owners WHERE id = $1', [owner]).catch(() => {});
    await Promise.all([apiPool.end(), workerPool.end()]);
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** `npm run --silent bench -- dispatch`: own database unless DATABASE_URL, figures as JSON last. */
export default async function main(): Promise<DispatchFigures> {
  const { url, cleanup } = await benchDatabase('bench');
  try {
    const pool = createPool(url, { max: 2 });
    await migrate(pool);
    await pool.end();
    const figures = await measureDispatch({ databaseUrl: url });
    console.log(JSON.stringify(figures));
    return figures;
  } finally {
    await cleanup();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
