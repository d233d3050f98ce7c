import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedCluster } from '@imagegen/db';

/**
 * Vitest global setup: one PostgreSQL cluster for the whole test run. Suites create their own
 * database in it (see packages/db/test/support/test-database.ts). The URL reaches the test workers
 * through the environment, which they inherit because they start after this runs.
 *
 * With TEST_DATABASE_URL set, that server is used instead and nothing is started.
 */
export default async function setup(): Promise<() => Promise<void>> {
  if (process.env.TEST_DATABASE_URL) return async () => {};
  const dataDir = await mkdtemp(path.join(tmpdir(), 'imagegen-test-pg-'));
  const cluster = await startEmbeddedCluster({ dataDir, durable: false });
  process.env.TEST_DATABASE_URL = cluster.url;
  return async () => {
    await cluster.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}
