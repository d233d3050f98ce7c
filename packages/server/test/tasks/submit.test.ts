import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  getTaskForOwner,
  listBatch,
  RoutingError,
  submitTask,
  taskStatusBody,
} from '../../src/tasks/index.ts';
import { createOwner, createServer } from '../support/fakes.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const PUBLIC_URL = 'http://api.test';
const text2image = (input: Record<string, unknown> = {}) => ({
  endpoint: '/sd/text2image/v1',
  kind: 'generation' as const,
  publicUrl: PUBLIC_URL,
  input: { prompt: 'a red fox', negative_prompt: '', samples: 1, seed: -1, ...input },
});

describe('submitting and reading tasks', () => {
  let db: TestDatabase;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    alice = await createOwner(db.pool);
    bob = await createOwner(db.pool);
  });
  afterAll(() => db.drop());

  it('queues a durable task and draws and records a seed for seed -1', async () => {
    const submitted = await submitTask(db.pool, { ownerId: alice, ...text2image() });
    const task = await getTaskForOwner(db.pool, alice, submitted.id);
    expect(task?.state).toBe('queued');
    expect(task?.endpoint).toBe('/sd/text2image/v1');
    expect(submitted.seed).toBeGreaterThanOrEqual(0);
    expect(task?.input.seed).toBe(submitted.seed);
    expect(taskStatusBody(task!, PUBLIC_URL)).toEqual({ status: 'PENDING' });
  });

  it('keeps a seed the request chose', async () => {
    const submitted = await submitTask(db.pool, { ownerId: alice, ...text2image({ seed: 1234 }) });
    expect(submitted.seed).toBe(1234);
    expect((await getTaskForOwner(db.pool, alice, submitted.id))?.input.seed).toBe(1234);
  });

  it('answers another owner, a missing id and a malformed id alike: not found', async () => {
    const { id } = await submitTask(db.pool, { ownerId: alice, ...text2image() });
    expect(await getTaskForOwner(db.pool, bob, id)).toBeNull();
    expect(await getTaskForOwner(db.pool, alice, randomUUID())).toBeNull();
    expect(await getTaskForOwner(db.pool, alice, "1' OR '1'='1")).toBeNull();
  });

  it('returns the final links at once for queued_image_urls, named with the file prefix', async () => {
    const submitted = await submitTask(db.pool, {
      ownerId: alice,
      ...text2image({ queued_image_urls: true, samples: 3, file_prefix: 'fox/../shot-' }),
    });
    expect(submitted.outputUrls).toHaveLength(3);
    const urls = submitted.outputUrls!;
    for (const [n, url] of urls.entries()) {
      expect(url).toMatch(new RegExp(`^${PUBLIC_URL}/files/[A-Za-z0-9_-]{22}/fox_.._shot-${n}\\.png$`));
    }
    const task = await getTaskForOwner(db.pool, alice, submitted.id);
    expect(taskStatusBody(task!, PUBLIC_URL)).toEqual({ status: 'PENDING', download_urls: urls });
  });

  it("lists a batch's tasks in submission order, for its owner only", async () => {
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      ids.push((await submitTask(db.pool, { ownerId: alice, ...text2image({ batch_id: 'batch-1' }) })).id);
    }
    await submitTask(db.pool, { ownerId: bob, ...text2image({ batch_id: 'batch-1' }) });
    expect((await listBatch(db.pool, alice, 'batch-1')).map((t) => t.id)).toEqual(ids);
    expect(await listBatch(db.pool, alice, 'batch-2')).toEqual([]);
  });

  it('commits many concurrent submissions, each exactly once', async () => {
    const owner = await createOwner(db.pool);
    const submitted = await Promise.all(
      Array.from({ length: 300 }, (_, n) =>
        submitTask(db.pool, { ownerId: owner, ...text2image({ seed: n }) }),
      ),
    );
    const rows = await db.pool.query('SELECT id, input FROM tasks WHERE owner_id = $1', [owner]);
    expect(rows.rowCount).toBe(300);
    expect(new Set(rows.rows.map((r) => r.id))).toEqual(new Set(submitted.map((s) => s.id)));
  });

  it('fails only the bad submission of a group, not its neighbours', async () => {
    const owner = await createOwner(db.pool);
    const results = await Promise.allSettled([
      submitTask(db.pool, { ownerId: owner, ...text2image() }),
      submitTask(db.pool, { ownerId: randomUUID(), ...text2image() }),
      submitTask(db.pool, { ownerId: owner, ...text2image() }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const rows = await db.pool.query('SELECT count(*)::int AS n FROM tasks WHERE owner_id = $1', [owner]);
    expect(rows.rows[0].n).toBe(2);
  });
});

describe('server_id routing at submission', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  async function refusal(ownerId: string, serverId: string): Promise<RoutingError> {
    const error = await submitTask(db.pool, { ownerId, ...text2image({ server_id: serverId }) }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(RoutingError);
    return error as RoutingError;
  }

  it('refuses server_id from a caller without an enterprise plan with 403', async () => {
    const owner = await createOwner(db.pool, 'BASIC');
    const error = await refusal(owner, 'any');
    expect(error.status).toBe(403);
    expect(error.message).toMatch(/enterprise plan.*BASIC/);
  });

  it('refuses "any" with 409 when the enterprise caller has no servers', async () => {
    const owner = await createOwner(db.pool, 'EPBASIC');
    expect((await refusal(owner, 'any')).status).toBe(409);
  });

  it("answers 404 for another owner's server exactly like a missing one", async () => {
    const owner = await createOwner(db.pool, 'EPSTANDARD');
    const other = await createOwner(db.pool, 'EPSTANDARD');
    await createServer(db.pool, 'gpu-other', other);
    expect((await refusal(owner, 'gpu-other')).status).toBe(404);
    expect((await refusal(owner, 'gpu-missing')).status).toBe(404);
  });

  it("routes 'any' to the owner's pool and a specific id to that server", async () => {
    const owner = await createOwner(db.pool, 'EPPREMIUM');
    await createServer(db.pool, 'gpu-a', owner);
    const any = await submitTask(db.pool, { ownerId: owner, ...text2image({ server_id: 'any' }) });
    const one = await submitTask(db.pool, { ownerId: owner, ...text2image({ server_id: 'gpu-a' }) });
    const shared = await submitTask(db.pool, { ownerId: owner, ...text2image() });
    const read = async (id: string) => {
      const t = (await getTaskForOwner(db.pool, owner, id))!;
      return [t.targetServer, t.targetPool];
    };
    expect(await read(any.id)).toEqual([null, `owner:${owner}`]);
    expect(await read(one.id)).toEqual(['gpu-a', `owner:${owner}`]);
    expect(await read(shared.id)).toEqual([null, 'shared']);
  });
});
