import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngineRegistry } from '@imagegen/engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTaskForOwner, startWorker, submitTask } from '../../src/tasks/index.ts';
import { enqueueWebhook } from '../../src/webhooks/webhook-outbox.ts';
import { createOwner, eventually, FakeBlobStore, FakeImageFetcher, fakeEngine } from '../support/fakes.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Starts worker-process.ts and resolves with the task id it reports running. */
function spawnWorker(url: string): { child: ChildProcess; running: Promise<string> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(here, '..', 'support', 'worker-process.ts')],
    {
      env: { ...process.env, WORKER_DATABASE_URL: url, WORKER_LEASE_MS: '1000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const running = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /RUNNING (\S+)\n/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) =>
      reject(new Error(`worker process exited (${code}) before running: ${stderr}`)),
    );
  });
  return { child, running };
}

describe('a worker process killed mid-task', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('leaves its task to another worker, which completes it exactly once', async () => {
    const owner = await createOwner(db.pool);
    const { id } = await submitTask(db.pool, {
      ownerId: owner,
      endpoint: '/sd/text2image/v1',
      kind: 'generation',
      input: {
        prompt: 'fox',
        samples: 2,
        seed: 7,
        task_marker: 'doomed',
        webhook: 'https://hooks.example/x',
      },
      publicUrl: 'http://api.test',
    });

    const { child, running } = spawnWorker(db.url);
    expect(await running).toBe('doomed');
    const claimed = (await getTaskForOwner(db.pool, owner, id))!;
    expect([claimed.state, claimed.attempts]).toEqual(['running', 1]);
    const exited = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const engine = fakeEngine('survivor', ['/sd/text2image/v1']);
    const stop = new AbortController();
    const survivor = startWorker({
      pool: db.pool,
      engines: createEngineRegistry([engine], { enabled: ['survivor'], pinned: {} }),
      fetcher: new FakeImageFetcher(),
      store: new FakeBlobStore(),
      publicUrl: 'http://api.test',
      signal: stop.signal,
      leaseMs: 1_000,
      pollMs: 100,
      enqueueWebhook,
    });
    try {
      const done = await eventually(async () => {
        const task = await getTaskForOwner(db.pool, owner, id);
        return task?.state === 'succeeded' || task?.state === 'failed' ? task : undefined;
      }, 15_000);
      expect([done.state, done.attempts, done.result?.meta?.engine]).toEqual(['succeeded', 2, 'survivor']);
      // Once: one engine run here, one outbox message, one image row per output.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(engine.jobs).toHaveLength(1);
      const outbox = await db.pool.query(
        'SELECT payload::jsonb AS body FROM webhook_deliveries WHERE task_id = $1',
        [id],
      );
      expect(outbox.rows.map((r) => r.body.status)).toEqual(['SUCCESS']);
      const images = await db.pool.query('SELECT count(*)::int AS n FROM images WHERE task_id = $1', [id]);
      expect(images.rows[0].n).toBe(2);
    } finally {
      stop.abort();
      await survivor.stopped;
    }
  });
});
