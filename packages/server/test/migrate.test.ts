import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db/migrate.ts';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

describe("the product's migrations", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
  });
  afterAll(() => db.drop());

  it('apply once, every number in order, the search insights among the API tables', async () => {
    const applied = await migrate(db.pool);
    expect(applied.map((name) => Number(name.slice(0, 4)))).toEqual(applied.map((_, n) => n + 1));
    expect(applied).toContain('0005_search.sql');
    const tables = await db.pool.query<{ name: string | null }>(
      `SELECT to_regclass(t) AS name FROM unnest(ARRAY['tasks', 'models', 'search_events']) AS t`,
    );
    expect(tables.rows.map((row) => row.name)).toEqual(['tasks', 'models', 'search_events']);
    expect(await migrate(db.pool)).toEqual([]);
  });
});
