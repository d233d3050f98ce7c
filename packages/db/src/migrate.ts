import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Pool } from './pool.ts';

// Any constant works; it only has to be the same for every process migrating this database.
const MIGRATION_LOCK = 7_315_201;

/**
 * Applies the numbered `.sql` files (`0001_accounts.sql`) of the given folders in name order, each
 * in its own transaction, and records them in `schema_migrations`. Each package that owns tables
 * keeps its migrations in a folder of its own; the numbers form one sequence across folders, so a
 * number is used once. A session advisory lock lets several API processes and
 * workers start at once against one database. Landed files are never edited: add a new one.
 * Answers the names it applied.
 */
export async function runMigrations(pool: Pool, folders: readonly string[]): Promise<string[]> {
  const files = await migrationFiles(folders);
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         name text PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const done = new Set(
      (await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
    );
    for (const name of [...files.keys()].sort()) {
      if (done.has(name)) continue;
      const sql = await readFile(files.get(name)!, 'utf8');
      try {
        await client.query('BEGIN');
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw new Error(`migration ${name} failed: ${(error as Error).message}`);
      }
      applied.push(name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
  return applied;
}

/** Every migration file of the folders, by name; a number used twice is a numbering mistake. */
async function migrationFiles(folders: readonly string[]): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const byNumber = new Map<string, string>();
  for (const folder of folders) {
    for (const name of await readdir(folder)) {
      if (!/^\d{4}_.+\.sql$/.test(name)) continue;
      const file = path.join(folder, name);
      const other = byNumber.get(name.slice(0, 4));
      if (other) throw new Error(`migration number ${name.slice(0, 4)} is used twice: ${other} and ${file}`);
      byNumber.set(name.slice(0, 4), file);
      files.set(name, file);
    }
  }
  return files;
}
