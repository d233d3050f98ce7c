import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  bundledClusterUrl,
  createPool,
  type EmbeddedCluster,
  type Pool,
  startEmbeddedCluster,
} from '@imagegen/db';
import pg from 'pg';
import { migrate } from '../db/migrate.ts';

/** The product's database inside the bundled cluster (the cluster's `postgres` db stays empty). */
const DATABASE_NAME = 'imagegen';

export interface OpenedDatabase {
  /** Connection string of the product database. */
  readonly url: string;
  readonly pool: Pool;
  /** Where it came from, for the start-up banner. */
  readonly origin: string;
  /** Ends the pool, and stops the bundled cluster when this process started it. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** IMAGEGEN_DATA_DIR: the bundled cluster lives in `<dataDir>/pg`. */
  dataDir: string;
  /** DATABASE_URL: use this PostgreSQL instead of the bundled one. */
  databaseUrl?: string | undefined;
  applicationName: string;
  poolSize?: number;
  log?: (line: string) => void;
}

/**
 * DATABASE_URL when set; otherwise the bundled PostgreSQL under the data directory: reused when
 * it already runs (`npm start` in another terminal, so the CLI works beside it), else started
 * (and initialised on first use). Migrations are applied either way.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<OpenedDatabase> {
  let cluster: EmbeddedCluster | null = null;
  let url: string;
  let origin: string;
  if (options.databaseUrl) {
    url = options.databaseUrl;
    origin = 'DATABASE_URL';
  } else {
    const running = await runningClusterUrl(options.dataDir);
    let adminUrl: string;
    if (running) {
      adminUrl = running;
      origin = `bundled PostgreSQL under ${options.dataDir} (already running)`;
    } else {
      cluster = await startEmbeddedCluster({ dataDir: options.dataDir, log: options.log });
      adminUrl = cluster.url;
      origin = `bundled PostgreSQL under ${options.dataDir}`;
    }
    await ensureDatabase(adminUrl, DATABASE_NAME);
    const parsed = new URL(adminUrl);
    parsed.pathname = `/${DATABASE_NAME}`;
    url = parsed.toString();
  }
  const pool = createPool(url, { max: options.poolSize ?? 20, applicationName: options.applicationName });
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    await cluster?.stop();
    throw error;
  }
  return {
    url,
    pool,
    origin,
    async close() {
      await pool.end();
      await cluster?.stop();
    },
  };
}

/** The URL of a bundled cluster another process runs on this data directory, if it answers. */
async function runningClusterUrl(dataDir: string): Promise<string | null> {
  const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
  const passwordFile = path.join(dataDir, 'pg-password');
  if (!existsSync(pidFile) || !existsSync(passwordFile)) return null;
  // postmaster.pid: line 1 the pid, line 4 the port (PostgreSQL's documented layout).
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const port = Number(lines[3]);
  if (!Number.isInteger(port) || port <= 0) return null;
  const password = (await readFile(passwordFile, 'utf8')).trim();
  const url = bundledClusterUrl(path.join(dataDir, 'pg'), port, password);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return url;
  } catch {
    return null; // a stale pid file: the server is gone; starting it again clears it
  } finally {
    await client.end().catch(() => {});
  }
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client(adminUrl);
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      await client.query(`CREATE DATABASE ${name}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created meanwhile by another starter
      });
    }
  } finally {
    await client.end();
  }
}
