import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { runMigrations } from '../../src/migrate.ts';
import { createPool, type Pool } from '../../src/pool.ts';

export interface TestDatabase {
  /** Connection string of this suite's own database. */
  readonly url: string;
  readonly pool: Pool;
  drop(): Promise<void>;
}

/**
 * A fresh database for one test suite, in the cluster the run's global setup started
 * (TEST_DATABASE_URL), with the migrations of the given folders applied. Suites never share
 * tables, so they can run in parallel.
 *
 * The migrations run once per run and set of migration files, into a template database
 * (`tmpl_<hash of the files' names and contents>`); each suite's database is a copy of it
 * (`CREATE DATABASE ... TEMPLATE`), about a tenth of the time of migrating every suite's own.
 * A changed migration file makes another template, so a copy never has stale tables.
 */
export async function createTestDatabase(
  options: { migrations?: readonly string[] } = {},
): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('TEST_DATABASE_URL is unset: run tests through vitest (root config)');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const template = options.migrations?.length ? await migratedTemplate(adminUrl, options.migrations) : null;
  await asAdmin(adminUrl, (admin) =>
    admin.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`),
  );
  const url = databaseUrl(adminUrl, name);
  const pool = createPool(url, { max: 10, applicationName: name });
  return {
    url,
    pool,
    async drop() {
      await pool.end();
      await asAdmin(adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** Any constant works; it only has to be the same for every test process of a run. */
const TEMPLATE_LOCK = 7_315_202;

/**
 * The name of a database holding exactly these migrations, made on first use. Test files run in
 * several processes at once: an advisory lock lets one of them make it while the others wait.
 */
async function migratedTemplate(adminUrl: string, folders: readonly string[]): Promise<string> {
  const template = `tmpl_${await migrationsHash(folders)}`;
  await asAdmin(adminUrl, async (admin) => {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (found.rowCount) return;
      // Made under another name and renamed once complete, so no copy is ever taken of a
      // half-migrated template, even after a process died while making one.
      const making = `${template}_making`;
      await admin.query(`DROP DATABASE IF EXISTS ${making} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${making}`);
      const pool = createPool(databaseUrl(adminUrl, making), { max: 1, applicationName: making });
      try {
        await runMigrations(pool, folders);
      } finally {
        // A database is copied only while nobody is connected to it.
        await pool.end();
      }
      await admin.query(`ALTER DATABASE ${making} RENAME TO ${template}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
  });
  return template;
}

/** What the template's content depends on: every migration file's name and bytes, in order. */
async function migrationsHash(folders: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const folder of folders) {
    for (const name of (await readdir(folder)).sort()) {
      if (!name.endsWith('.sql')) continue;
      hash
        .update(`${name}\0`)
        .update(await readFile(path.join(folder, name)))
        .update('\0');
    }
  }
  return hash.digest('hex').slice(0, 16);
}

async function asAdmin<T>(adminUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
