import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedCluster } from '@imagegen/db';
import pg from 'pg';

export interface BenchDatabase {
  url: string;
  /** The bundled cluster's data directory (for its processes' CPU time); absent with DATABASE_URL. */
  pgDataDir?: string;
  cleanup(): Promise<void>;
}

/**
 * The database a benchmark runs on: DATABASE_URL when set, otherwise a durable bundled PostgreSQL
 * in a temporary directory (fsync on, as in production) with a fresh database `name`, removed by
 * cleanup().
 */
export async function benchDatabase(name: string): Promise<BenchDatabase> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, cleanup: async () => {} };
  const dataDir = await mkdtemp(path.join(tmpdir(), `imagegen-${name}-`));
  const cluster = await startEmbeddedCluster({ dataDir, durable: true });
  const admin = new pg.Client(cluster.url);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    url: cluster.url.replace(/\/postgres$/, `/${name}`),
    pgDataDir: path.join(dataDir, 'pg'),
    cleanup: async () => {
      await cluster.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
