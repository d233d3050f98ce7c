import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../src/listen.ts';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

const CHANNEL = 'listen_test';

describe('listening on a pooled connection', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  const notify = (payload: string) => db.pool.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);
  const listenerPid = async () => {
    const rows = await db.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = $1`,
      [`LISTEN ${CHANNEL}`],
    );
    return rows.rows.map((row) => row.pid);
  };

  it('hands over each payload, and a null when it starts listening', async () => {
    const events: (string | null)[] = [];
    const listener = await listen(
      db.pool,
      CHANNEL,
      (payload) => events.push(payload),
      () => {},
    );
    await notify('first');
    await notify('second');
    await expect.poll(() => events).toEqual([null, 'first', 'second']);
    await listener.close();
    await notify('after close');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(events).toEqual([null, 'first', 'second']);
  });

  it('replaces a dropped connection, says so with a null, and hears notifications again', async () => {
    const events: (string | null)[] = [];
    const lines: string[] = [];
    const listener = await listen(
      db.pool,
      CHANNEL,
      (payload) => events.push(payload),
      (line) => lines.push(line),
    );
    const [pid] = await listenerPid();
    expect(pid).toBeDefined();
    // The server ends the listening session, as a restart or a network cut would.
    await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
    await expect.poll(() => events).toEqual([null, null]);
    expect(lines.join('\n')).toContain('connection lost');
    await notify('again');
    await expect.poll(() => events).toEqual([null, null, 'again']);
    await listener.close();
    // Every connection went back to the pool (the dropped one destroyed, not released twice).
    await expect.poll(() => db.pool.totalCount - db.pool.idleCount).toBe(0);
  });
});
