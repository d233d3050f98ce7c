import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand, USAGE } from '../../src/cli/commands.ts';
import { PRODUCT_MIGRATIONS } from '../../src/db/migrate.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

describe('the migrate command', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('lists every migration of the product as applied, in order, and is in the usage text', async () => {
    const files = (await Promise.all(PRODUCT_MIGRATIONS.map((folder) => readdir(folder))))
      .flat()
      .filter((name) => /^\d{4}_.+\.sql$/.test(name))
      .sort();
    const out = await runCommand(db.pool, ['migrate'], {});
    expect((out.json as { name: string }[]).map((m) => m.name)).toEqual(files);
    expect(out.text).toBe(`${files.length} migrations applied, the latest ${files.at(-1)}`);
    expect(USAGE).toContain('  migrate ');
  });
});
