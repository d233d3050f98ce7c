import { randomBytes } from 'node:crypto';
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
 */
export async function createTestDatabase(
  options: { migrations?: readonly string[] } = {},
): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('TEST_DATABASE_URL is unset: run tests through vitest (root config)');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = createPool(url.toString(), { max: 10, applicationName: name });
  if (options.migrations?.length) await runMigrations(pool, options.migrations);
  return {
    url: url.toString(),
    pool,
    async drop() {
      await pool.end();
      const client = new pg.Client(adminUrl);
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
