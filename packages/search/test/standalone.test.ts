import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { recordsOfPage } from '../src/indexer.ts';
import type { SearchIndexFile } from '../src/records.ts';
import { type SearchServer, startSearchServer } from '../src/search-server.ts';
import { listSearchEvents } from '../src/sql/listSearchEvents.ts';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

const STANDALONE = path.resolve(import.meta.dirname, '../src/standalone.ts');
const SETTINGS = { appId: 'alone-app', apiKey: 'alone-key', indexName: 'handbook' };

function indexOf(title: string, text: string): string {
  const html = `<html><head><meta property="og:url" content="http://localhost:3000/${title}"></head><body><article><header><h1>${title}</h1></header><p>${text}</p></article></body></html>`;
  const file: SearchIndexFile = {
    version: 1,
    builtAt: new Date().toISOString(),
    siteUrl: 'http://localhost:3000',
    records: recordsOfPage(html, `${title}/index.html`).records,
  };
  return JSON.stringify(file);
}

function post(url: string, pathname: string, body: unknown, credentials = SETTINGS): Promise<Response> {
  const target = new URL(pathname, url);
  target.searchParams.set('x-algolia-application-id', credentials.appId);
  target.searchParams.set('x-algolia-api-key', credentials.apiKey);
  return fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: JSON.stringify(body),
  });
}

/** A PostgreSQL URL on a loopback port nothing listens on. */
async function unreachableDatabase(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return `postgres://nobody:secret@127.0.0.1:${port}/nothing`;
}

async function pagesFound(url: string, query: string): Promise<string[]> {
  const response = await post(url, '/1/indexes/*/queries', { requests: [{ indexName: 'handbook', query }] });
  expect(response.status).toBe(200);
  const { results } = (await response.json()) as { results: { hits: { url: string }[] }[] };
  return results[0]!.hits.map((hit) => new URL(hit.url).pathname);
}

let dir: string;
let indexFile: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'search-alone-'));
  indexFile = path.join(dir, 'search-index.json');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the search service on its own port', () => {
  let server: SearchServer | undefined;
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await db?.drop();
    db = undefined;
  });

  it('answers the query paths with its credentials and index, and 404 elsewhere', async () => {
    await writeFile(indexFile, indexOf('Relight', 'Change the light of a photo.'));
    server = await startSearchServer({ indexFile, port: 0, settings: SETTINGS });
    expect(await pagesFound(server.url, 'relight')).toEqual(['/Relight']);
    const single = await post(server.url, '/1/indexes/handbook/query', { query: 'relight' });
    expect(((await single.json()) as { nbHits: number }).nbHits).toBeGreaterThan(0);
    const defaults = { appId: 'imagegen', apiKey: 'search-only-key', indexName: 'docs' };
    expect((await post(server.url, '/1/indexes/*/queries', { requests: [] }, defaults)).status).toBe(403);
    const elsewhere = await fetch(`${server.url}/index.html`);
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toEqual({ message: 'Not found', status: 404 });
    // Without a database, insights are not stored, and it says so.
    expect((await post(server.url, '/1/events', { events: [] })).status).toBe(503);
  });

  it('takes a rewritten index file on reload', async () => {
    await writeFile(indexFile, indexOf('Relight', 'Change the light of a photo.'));
    server = await startSearchServer({ indexFile, port: 0, settings: SETTINGS });
    await writeFile(indexFile, indexOf('Outpainting', 'Extend an image.'));
    expect(await server.reload()).toBeGreaterThan(0);
    expect(await pagesFound(server.url, 'outpainting')).toEqual(['/Outpainting']);
    expect(await pagesFound(server.url, 'relight')).toEqual([]);
  });

  it('creates its table in an empty database and stores insights events there', async () => {
    await writeFile(indexFile, indexOf('Relight', 'Change the light of a photo.'));
    db = await createTestDatabase({ migrate: false });
    server = await startSearchServer({ indexFile, port: 0, settings: SETTINGS, databaseUrl: db.url });
    const response = await post(server.url, '/1/events', {
      events: [
        {
          eventType: 'view',
          eventName: 'Hits viewed',
          index: 'handbook',
          userToken: 'u-1',
          objectIDs: ['a'],
        },
      ],
    });
    expect(response.status).toBe(200);
    const [stored] = await listSearchEvents(db.pool, 1);
    expect(stored).toMatchObject({ event_type: 'view', index_name: 'handbook', object_ids: ['a'] });
  });

  it('refuses to start, saying why, when the insights database cannot be reached', async () => {
    await writeFile(indexFile, indexOf('Relight', 'Change the light of a photo.'));
    await expect(
      startSearchServer({ indexFile, port: 0, settings: SETTINGS, databaseUrl: await unreachableDatabase() }),
    ).rejects.toThrow(/the insights database at DATABASE_URL is not usable: .*ECONNREFUSED/);
  });
});

describe('standalone.ts', () => {
  let child: ChildProcess | undefined;
  let output = '';
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    child = undefined;
    output = '';
  });

  function run(env: NodeJS.ProcessEnv = {}): ChildProcess {
    const started = spawn(
      process.execPath,
      ['--import', 'tsx', STANDALONE, '--index', indexFile, '--port', '0'],
      {
        env: {
          ...process.env,
          SEARCH_APP_ID: SETTINGS.appId,
          SEARCH_API_KEY: SETTINGS.apiKey,
          SEARCH_INDEX: SETTINGS.indexName,
          DATABASE_URL: '',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    started.stdout!.on('data', (chunk) => {
      output += chunk;
    });
    started.stderr!.on('data', (chunk) => {
      output += chunk;
    });
    return started;
  }

  async function waitFor(pattern: RegExp): Promise<RegExpExecArray> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const match = pattern.exec(output);
      if (match) return match;
      if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('serves the index file, reloads it on SIGHUP and stops on SIGTERM', async () => {
    await writeFile(indexFile, indexOf('Relight', 'Change the light of a photo.'));
    child = run();
    const url = (await waitFor(/index handbook, (http:\/\/\S+)\/1\/indexes/))[1]!;
    expect(await pagesFound(url, 'relight')).toEqual(['/Relight']);

    await writeFile(indexFile, indexOf('Outpainting', 'Extend an image.'));
    child.kill('SIGHUP');
    await waitFor(/reloaded \d+ records/);
    expect(await pagesFound(url, 'outpainting')).toEqual(['/Outpainting']);

    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('exits 1 with the reason when DATABASE_URL cannot be reached', async () => {
    await writeFile(indexFile, indexOf('Relight', 'Change the light of a photo.'));
    child = run({ DATABASE_URL: await unreachableDatabase() });
    const code = await new Promise((resolve) => child!.once('exit', resolve));
    expect(code).toBe(1);
    expect(output).toMatch(
      /search service did not start: the insights database at DATABASE_URL is not usable/,
    );
  });
});
