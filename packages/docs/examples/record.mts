/**
 * `npm run --silent docs:examples`: records every task endpoint's exchange with the product
 * (record-exchanges.ts) and writes examples/recorded/<slug>.json, the recordings the docs pages
 * show; a recording of an endpoint the contract no longer has is removed. Runs on a throwaway
 * bundled PostgreSQL in a temporary folder (or a fresh database on TEST_DATABASE_URL's server), so
 * no earlier task shows in the answers.
 *
 * Then the exchanges of the other protocols the API speaks (record-protocols.mts) into
 * examples/recorded-protocols/<name>.json.
 *
 * `npm run --silent docs:examples -- /outpainting/v1 ...` records those endpoints only.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPool, startEmbeddedCluster } from '@imagegen/db';
import { migrate } from '@imagegen/server';
import { recordingSlug } from '../src/components/recorded-exchange.ts';
import { recordExchanges, recordedPaths } from './record-exchanges.mts';
import { recordProtocols } from './record-protocols.mts';
import { PROTOCOLS_DIR, RECORDED_DIR, recordingText } from './recordings.mts';

const only = process.argv.slice(2);
const unknown = only.filter((p) => !recordedPaths().includes(p));
if (unknown.length > 0) {
  console.error(
    `not task endpoints of the contract: ${unknown.join(', ')} (one of ${recordedPaths().join(', ')})`,
  );
  process.exit(2);
}

const started = performance.now();
const server = await databaseServer();
const name = `docs_examples_${randomBytes(4).toString('hex')}`;
await adminQuery(server.url, `CREATE DATABASE ${name}`);
const url = new URL(server.url);
url.pathname = `/${name}`;
const pool = createPool(url.toString(), { max: 10, applicationName: 'docs-examples' });
try {
  await migrate(pool);
  const recordings = await recordExchanges(pool, {
    paths: only.length > 0 ? only : recordedPaths(),
    log: (line) => console.error(line),
  });
  await mkdir(RECORDED_DIR, { recursive: true });
  for (const recording of recordings) {
    await writeFile(
      path.join(RECORDED_DIR, `${recordingSlug(recording.path)}.json`),
      recordingText(recording),
    );
  }
  if (only.length === 0) {
    const current = new Set(recordedPaths().map((p) => `${recordingSlug(p)}.json`));
    for (const file of await readdir(RECORDED_DIR)) {
      if (file.endsWith('.json') && !current.has(file)) await rm(path.join(RECORDED_DIR, file));
    }
  }
  if (only.length === 0) {
    await mkdir(PROTOCOLS_DIR, { recursive: true });
    for (const recording of await recordProtocols(pool)) {
      await writeFile(path.join(PROTOCOLS_DIR, `${recording.name}.json`), recordingText(recording));
    }
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.error(
    `recorded ${recordings.length} exchanges into ${path.relative(process.cwd(), RECORDED_DIR)} in ${seconds} s`,
  );
} finally {
  await pool.end();
  await adminQuery(server.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await server.stop();
}

/** TEST_DATABASE_URL's server, or a bundled one in a temporary folder (stopped and removed after). */
async function databaseServer(): Promise<{ url: string; stop(): Promise<void> }> {
  if (process.env.TEST_DATABASE_URL) return { url: process.env.TEST_DATABASE_URL, stop: async () => {} };
  const dataDir = await mkdtemp(path.join(tmpdir(), 'imagegen-docs-examples-pg-'));
  const cluster = await startEmbeddedCluster({ dataDir, durable: false });
  return {
    url: cluster.url,
    async stop() {
      await cluster.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const admin = createPool(adminUrl, { max: 1, applicationName: 'docs-examples' });
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}
