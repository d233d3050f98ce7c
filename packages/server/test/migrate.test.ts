import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db/migrate.ts';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

describe('migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
  });
  afterAll(() => db.drop());

  it('applies every migration once, then nothing on a second run', async () => {
    const first = await migrate(db.pool);
    const second = await migrate(db.pool);
    const recorded = await db.pool.query('SELECT name FROM schema_migrations ORDER BY name');
    expect(recorded.rows.map((r) => r.name)).toEqual(first);
    expect(second).toEqual([]);
  });

  it('lets concurrent starters migrate one database without conflict', async () => {
    const results = await Promise.all([migrate(db.pool), migrate(db.pool), migrate(db.pool)]);
    expect(results.flat()).toEqual([]);
  });
});
