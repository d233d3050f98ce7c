import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { submitTask, TASKS_CHANNEL } from '../../src/tasks/index.ts';
import { insertTasks } from '../../src/tasks/sql/insertTasks.ts';
import { notifyTasks } from '../../src/tasks/sql/notifyTasks.ts';
import { createOwner, eventually } from '../support/fakes.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

/** Waits long enough for a notification sent by a commit to reach a listener on loopback. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe('waking the workers', () => {
  let db: TestDatabase;
  let listener: pg.Client;
  let heard: number[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    listener = new pg.Client(db.url);
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.channel === TASKS_CHANNEL) heard.push(Date.now());
    });
    await listener.query(`LISTEN ${TASKS_CHANNEL}`);
  });
  afterEach(() => {
    heard = [];
  });
  afterAll(async () => {
    await listener.end();
    await db.drop();
  });

  const text2image = (ownerId: string, n: number) => ({
    ownerId,
    endpoint: '/sd/text2image/v1',
    kind: 'generation' as const,
    input: { prompt: `task ${n}` },
    publicUrl: 'http://api.test',
  });

  it('commits an inserted task without a notification inside its transaction', async () => {
    const owner = await createOwner(db.pool);
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await insertTasks(client, [
        {
          id: randomUUID(),
          owner_id: owner,
          endpoint: '/sd/text2image/v1',
          kind: 'generation',
          input: { prompt: 'quiet' },
          target_server: null,
          target_pool: 'shared',
          batch_id: null,
          max_attempts: 3,
          output_keys: [],
          input_keys: [],
        },
      ]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await settle();
    expect(heard).toEqual([]);
  });

  it('announces submitted tasks after their commit, one notification for a burst', async () => {
    const owner = await createOwner(db.pool);
    await Promise.all(Array.from({ length: 200 }, (_, n) => submitTask(db.pool, text2image(owner, n))));
    await eventually(async () => (heard.length > 0 ? true : undefined));
    await settle();
    expect(heard.length).toBeGreaterThan(0);
    // Groups of submissions share a notification; a notification per task would be 200.
    expect(heard.length).toBeLessThan(50);
  });

  it('announces a lone submission at once', async () => {
    const owner = await createOwner(db.pool);
    const started = Date.now();
    await submitTask(db.pool, text2image(owner, 0));
    await eventually(async () => (heard.length > 0 ? true : undefined));
    expect(heard[0]! - started).toBeLessThan(1_000);
  });

  it('still notifies when a task goes back to the queue (retry, released or expired lease)', async () => {
    const owner = await createOwner(db.pool);
    const { id } = await submitTask(db.pool, text2image(owner, 0));
    await settle();
    await db.pool.query(`UPDATE tasks SET state = 'running', lease_owner = 'w/1' WHERE id = $1`, [id]);
    await settle();
    heard = [];
    await db.pool.query(`UPDATE tasks SET state = 'queued', lease_owner = NULL WHERE id = $1`, [id]);
    await eventually(async () => (heard.length > 0 ? true : undefined));
    expect(heard).toHaveLength(1);
  });

  it("keeps the notification's relaxed commit to itself: the connection stays synchronous", async () => {
    const client = await db.pool.connect();
    try {
      // The test cluster runs without fsync; the product's sessions commit synchronously.
      await client.query('SET synchronous_commit = on');
      await notifyTasks(client);
      const setting = await client.query('SHOW synchronous_commit');
      expect(setting.rows[0].synchronous_commit).toBe('on');
    } finally {
      client.release(true);
    }
    await eventually(async () => (heard.length > 0 ? true : undefined));
  });
});
