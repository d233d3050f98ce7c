import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createEngineRegistry, type Engine, inMemoryImage } from '@imagegen/engines';
import { ThreadPool } from '@imagegen/engines/threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDecodes } from '../../src/fetch/decode-check.ts';
import { createImageFetcher, type ImageFetcher } from '../../src/fetch/image-fetcher.ts';
import type { BlobStore } from '../../src/storage/blob-store.ts';
import {
  cancelTask,
  getTaskForOwner,
  startWorker,
  submitTask,
  type TaskRecord,
} from '../../src/tasks/index.ts';
import { createOwner, eventually, FakeBlobStore, png } from '../support/fakes.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/**
 * Cancel-After, a cancel and the attempt's time limit stop a task within a second, whatever its
 * attempt is doing: fetching an input, decoding one, waiting for its engine, running on it, or
 * storing its outputs. Each phase is made to block for good here, by parts that see the attempt's
 * signal but, where a real part cannot (a model pass on its thread, a write already on its way),
 * do not stop for it: the attempt must end anyway.
 *
 * The time is measured from the moment the stop was due (the cancel answered, the deadline, the
 * limit) to the worker's line that settles the attempt; both on this machine's clock.
 */
const PIPELINE = '/bgremover/v1';
const STOP_WITHIN_MS = 1_000;
const LIMIT_MS = 1_500;

type Phase =
  | 'fetching'
  | 'fetching a stored file'
  | 'decoding'
  | 'queued on its engine'
  | 'running'
  | 'storing outputs';
type Stop = 'Cancel-After' | 'a cancel' | 'the attempt time limit';

let db: TestDatabase;
let owner: string;
let stalled: Server;
let stallUrl: string;
let dir: string;
let fifo: string;

beforeAll(async () => {
  db = await createTestDatabase();
  owner = await createOwner(db.pool);
  // Answers its headers and a few bytes, then nothing more.
  stalled = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'image/png' });
    response.write(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  });
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  stallUrl = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}/stall.png`;
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-phases-'));
  // A named pipe no one writes: a decode process reading it waits for good.
  fifo = path.join(dir, 'never.png');
  execFileSync('mkfifo', [fifo]);
});

afterAll(async () => {
  stalled.closeAllConnections();
  await new Promise((resolve) => stalled.close(resolve));
  await db.drop();
  await rm(dir, { recursive: true, force: true });
});

/** What each phase blocks on, and when it saw the attempt's signal abort. */
function blockers(phase: Phase) {
  const seen: { reached?: number; aborted?: number; connectionClosed?: number } = {};
  // The engine's one thread, where its jobs block as model passes do.
  const threads = new ThreadPool<{ ms: number }, number>(
    new URL('../support/blocking-thread.ts', import.meta.url),
    1,
  );
  const watch = (signal: AbortSignal | undefined) => {
    seen.reached ??= Date.now();
    signal?.addEventListener('abort', () => {
      seen.aborted ??= Date.now();
    });
  };
  const image = inMemoryImage(Buffer.alloc(0), { contentType: 'image/png', width: 8, height: 8, url: 'x' });
  const real = createImageFetcher({ allowPrivate: true });
  const fetcher: ImageFetcher = {
    async fetchImage(_url, field, options = {}) {
      if (phase === 'fetching') {
        watch(options.signal);
        return real.fetchImage(stallUrl, field, options);
      }
      if (phase === 'fetching a stored file')
        return store.get('stored/in.png', { ...options }).then(() => image);
      if (phase === 'decoding') {
        watch(options.signal);
        await checkDecodes(fifo, { contentType: 'image/png', width: 8, height: 8 }, field, options.signal);
      }
      return image;
    },
  };
  const memory = new FakeBlobStore();
  const store: BlobStore = {
    async get(key, options = {}) {
      if (phase !== 'fetching a stored file') return memory.get(key);
      // A store that honours the signal (an S3 GET), holding the read until it does.
      watch(options.signal);
      return new Promise((_resolve, reject) =>
        options.signal?.addEventListener('abort', () => reject(options.signal!.reason)),
      );
    },
    async put(key, data, contentType, options = {}) {
      if (phase !== 'storing outputs') return memory.put(key, data, contentType);
      // A write already on its way that does not stop for the signal.
      watch(options.signal);
      return new Promise<void>(() => {});
    },
    delete: (key) => memory.delete(key),
  };
  const engine: Engine = {
    name: 'blocking',
    pipelines: [PIPELINE],
    async run(_job, ctx) {
      if (phase === 'queued on its engine') {
        void threads.run({ ms: 4_000 }).catch(() => {}); // another job, ahead of this one
        watch(ctx.signal);
        // Waits for the thread in the engine's queue, which it leaves on the signal.
        await threads.run({ ms: 20_000 }, { signal: ctx.signal });
      }
      if (phase === 'running') {
        watch(ctx.signal);
        // A pass already on its thread: nothing stops it, and the engine does not stop waiting.
        await threads.run({ ms: 20_000 });
      }
      return { images: [await png(8, 8)] };
    },
  };
  return { seen, fetcher, store, engine, threads };
}

async function runOnce(phase: Phase, stop: Stop) {
  const parts = blockers(phase);
  const lines: { at: number; line: string }[] = [];
  const halt = new AbortController();
  const worker = startWorker({
    pool: db.pool,
    engines: createEngineRegistry([parts.engine], { enabled: ['blocking'], pinned: {} }),
    fetcher: parts.fetcher,
    store: parts.store,
    publicUrl: 'http://api.test',
    signal: halt.signal,
    concurrency: 1,
    pollMs: 100,
    leaseMs: 30_000,
    attemptTimeoutMs: stop === 'the attempt time limit' ? LIMIT_MS : 600_000,
    log: (line) => lines.push({ at: Date.now(), line }),
  });
  try {
    const { id } = await submitTask(db.pool, {
      ownerId: owner,
      endpoint: PIPELINE,
      kind: 'generation',
      input: { init_image: 'http://images.test/in.png' },
      publicUrl: 'http://api.test',
      maxAttempts: 1,
      ...(stop === 'Cancel-After' ? { cancelAfter: { ms: LIMIT_MS, text: '1s500ms' } } : {}),
    });
    await eventually(async () => parts.seen.reached);
    let due: number;
    if (stop === 'a cancel') {
      await cancelTask(db.pool, {
        ownerId: owner,
        id,
        store: parts.store,
        publicUrl: 'x',
      });
      due = Date.now();
    } else {
      const task = await settledOrRunning(id);
      due =
        stop === 'Cancel-After'
          ? (task.deadlineAt as Date).getTime()
          : (task.startedAt as Date).getTime() + LIMIT_MS;
    }
    const ended = await eventually(
      async () => lines.find(({ line }) => line.startsWith(`task ${id}:`))?.at,
      15_000,
    );
    const task = (await getTaskForOwner(db.pool, owner, id))!;
    // The engine's queue let the job go rather than run it later.
    if (phase === 'queued on its engine') expect(parts.threads.waiting).toBe(0);
    return { due, ended, aborted: parts.seen.aborted, task, lines: lines.map(({ line }) => line) };
  } finally {
    halt.abort();
    await worker.stopped;
    await parts.threads.close();
  }
}

async function settledOrRunning(id: string): Promise<TaskRecord & { deadlineAt?: Date | null }> {
  const { rows } = await db.pool.query<{ started_at: Date; deadline_at: Date | null }>(
    'SELECT started_at, deadline_at FROM tasks WHERE id = $1',
    [id],
  );
  const task = (await getTaskForOwner(db.pool, owner, id))!;
  return { ...task, startedAt: rows[0]!.started_at, deadlineAt: rows[0]!.deadline_at };
}

const PHASES: Phase[] = [
  'fetching',
  'fetching a stored file',
  'decoding',
  'queued on its engine',
  'running',
  'storing outputs',
];
const STOPS: Stop[] = ['Cancel-After', 'a cancel', 'the attempt time limit'];

describe.each(PHASES)('an attempt %s', (phase) => {
  it.each(STOPS)(
    'stops within a second of %s',
    async (stop) => {
      const { due, ended, aborted, task, lines } = await runOnce(phase, stop);
      expect(aborted, lines.join('\n')).toBeDefined();
      expect(ended - due, `${phase}, ${stop}: ${lines.join(' | ')}`).toBeLessThan(STOP_WITHIN_MS);
      expect(task.state).toBe('failed');
      expect(task.error).toBe(
        stop === 'a cancel'
          ? 'cancelled by the caller'
          : stop === 'Cancel-After'
            ? "the task's deadline (Cancel-After: 1s500ms) passed"
            : 'engine error: the attempt took longer than 1.5 s',
      );
    },
    30_000,
  );
});
