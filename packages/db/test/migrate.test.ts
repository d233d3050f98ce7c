import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrations } from '../src/migrate.ts';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

describe('the migration runner', () => {
  let db: TestDatabase;
  let folders: string;
  const folder = async (name: string, files: Record<string, string>) => {
    const dir = path.join(folders, name);
    await mkdir(dir, { recursive: true });
    for (const [file, sql] of Object.entries(files)) await writeFile(path.join(dir, file), sql);
    return dir;
  };
  beforeAll(async () => {
    db = await createTestDatabase();
    folders = await mkdtemp(path.join(tmpdir(), 'imagegen-migrations-'));
  });
  afterAll(async () => {
    await db.drop();
    await rm(folders, { recursive: true, force: true });
  });

  it('applies the files of several folders once, in one numbered order, and nothing on a second run', async () => {
    const accounts = await folder('accounts', {
      '0001_owners.sql': 'CREATE TABLE owners (id int PRIMARY KEY);',
      '0003_owner_names.sql': 'ALTER TABLE owners ADD COLUMN name text;',
      'README.md': 'not a migration',
    });
    // 0002 comes from the other folder and runs between the two above.
    const search = await folder('search', { '0002_events.sql': 'CREATE TABLE events (owner int);' });
    const first = await runMigrations(db.pool, [accounts, search]);
    expect(first).toEqual(['0001_owners.sql', '0002_events.sql', '0003_owner_names.sql']);
    const recorded = await db.pool.query('SELECT name FROM schema_migrations ORDER BY name');
    expect(recorded.rows.map((r) => r.name)).toEqual(first);
    expect(await runMigrations(db.pool, [accounts, search])).toEqual([]);
  });

  it('lets concurrent starters migrate one database without conflict', async () => {
    const more = await folder('more', { '0004_more.sql': 'CREATE TABLE more_rows (id int);' });
    const results = await Promise.all([1, 2, 3].map(() => runMigrations(db.pool, [more])));
    expect(results.flat()).toEqual(['0004_more.sql']);
  });

  it('rolls a failing file back, records nothing for it, and names it', async () => {
    const broken = await folder('broken', {
      '0005_half.sql': 'CREATE TABLE half_done (id int); SELECT no_such_function();',
    });
    await expect(runMigrations(db.pool, [broken])).rejects.toThrow(/migration 0005_half\.sql failed/);
    const table = await db.pool.query("SELECT to_regclass('half_done') AS name");
    expect(table.rows[0].name).toBeNull();
    const recorded = await db.pool.query("SELECT 1 FROM schema_migrations WHERE name = '0005_half.sql'");
    expect(recorded.rowCount).toBe(0);
  });

  it('refuses a number used in two folders', async () => {
    const one = await folder('one', { '0009_a.sql': 'SELECT 1;' });
    const two = await folder('two', { '0009_b.sql': 'SELECT 2;' });
    await expect(runMigrations(db.pool, [one, two])).rejects.toThrow(/number 0009 is used twice/);
  });
});
