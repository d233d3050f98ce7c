/**
 * A worker in its own process, for the SIGKILL test: it claims tasks on `/sd/text2image/v1` and
 * hangs inside the engine after printing `RUNNING <task id>`, until it is killed.
 */

import { createPool } from '@imagegen/db';
import { createEngineRegistry } from '@imagegen/engines';
import { startWorker } from '../../src/tasks/index.ts';
import { FakeBlobStore, FakeImageFetcher, fakeEngine } from './fakes.ts';

const url = process.env.WORKER_DATABASE_URL;
if (!url) throw new Error('WORKER_DATABASE_URL is unset');
const pool = createPool(url, { max: 4 });
const engine = fakeEngine('hangs', ['/sd/text2image/v1'], async (job, ctx) => {
  process.stdout.write(`RUNNING ${String(job.input.task_marker)}\n`);
  await new Promise((resolve) => setTimeout(resolve, 10 * 60_000, ctx.signal));
  throw new Error('the hanging engine was never meant to finish');
});
startWorker({
  pool,
  engines: createEngineRegistry([engine], { enabled: ['hangs'], pinned: {} }),
  fetcher: new FakeImageFetcher(),
  store: new FakeBlobStore(),
  publicUrl: 'http://api.test',
  signal: new AbortController().signal,
  leaseMs: Number(process.env.WORKER_LEASE_MS ?? 1_000),
});
