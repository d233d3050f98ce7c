import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runInNewContext } from 'node:vm';
import { gunzipSync } from 'node:zlib';
import { indexBuiltSite } from '@imagegen/search';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DocsHost, startDocsHost } from '../../host/docs-host.ts';
import { startDocsSite } from '../../host/docs-site.ts';
import {
  RUNTIME_SETTINGS_GLOBAL,
  type RuntimeSettings,
  runtimeSettingsScript,
  servedRuntimeSettings,
} from '../../runtime-settings.ts';

/** As a Docusaurus build writes pages: the site's scripts at the end of the head. */
const PAGE =
  '<!doctype html><html lang=en><head><meta charset=UTF-8><title>Relight</title>' +
  '<script src=/assets/js/main.0123abcd.js defer></script></head>' +
  '<body><article><header><h1>Relight</h1></header><p>Change the light of a photo.</p></article></body></html>';
const NOT_FOUND = '<!doctype html><html><head><title>Page Not Found</title></head><body></body></html>';

const RUN: RuntimeSettings = {
  apiUrl: 'https://api.example.test:8443',
  signUpUrl: 'https://accounts.example.test/join',
  search: {
    appId: 'run-app',
    apiKey: 'run-key',
    indexName: 'run-docs',
    hosts: ['self', 'search.example.test'],
  },
};

let buildDir: string;
beforeAll(async () => {
  buildDir = await mkdtemp(path.join(tmpdir(), 'docs-runtime-'));
  await writeFile(path.join(buildDir, 'index.html'), PAGE);
  await writeFile(path.join(buildDir, '404.html'), NOT_FOUND);
});
afterAll(() => rm(buildDir, { recursive: true, force: true }));

let host: DocsHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

/** One request, the body as sent (fetch would decompress it). */
function raw(url: string, init: { method?: string; headers?: Record<string, string> } = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>(
    (resolve, reject) => {
      request(url, init, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      })
        .on('error', reject)
        .end();
    },
  );
}

/** What a browser's window holds after running the page's inline scripts. */
function settingsOfPage(html: string): unknown {
  const window: Record<string, unknown> = {};
  for (const [, code] of html.matchAll(/<script>(.*?)<\/script>/gs)) runInNewContext(code!, { window });
  return window[RUNTIME_SETTINGS_GLOBAL];
}

describe('run-time settings written into the pages by the docs host', () => {
  it('gives every page, the not-found page too, the settings of the run before the site’s scripts', async () => {
    host = await startDocsHost({ port: 0, buildDir, runtimeSettings: RUN });
    const page = await (await fetch(`${host.url}/`)).text();
    expect(settingsOfPage(page)).toEqual(RUN);
    expect(page.indexOf(RUNTIME_SETTINGS_GLOBAL)).toBeLessThan(page.indexOf('</head>'));
    expect(page.replace(runtimeSettingsScript(RUN), '')).toBe(PAGE);

    const missing = await fetch(`${host.url}/no/such/page`);
    expect(missing.status).toBe(404);
    expect(settingsOfPage(await missing.text())).toEqual(RUN);
  });

  it('sends the same page gzipped, and a Content-Length that fits the page with its settings', async () => {
    host = await startDocsHost({ port: 0, buildDir, runtimeSettings: RUN });
    const plain = await raw(`${host.url}/`);
    expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
    const gzipped = await raw(`${host.url}/`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.body).toString()).toBe(plain.body.toString());
    const head = await raw(`${host.url}/`, { method: 'HEAD' });
    expect(head.headers['content-length']).toBe(plain.headers['content-length']);
    expect(head.body.length).toBe(0);
  });

  it('serves the built pages unchanged without settings', async () => {
    host = await startDocsHost({ port: 0, buildDir });
    expect(await (await fetch(`${host.url}/`)).text()).toBe(
      await readFile(path.join(buildDir, 'index.html'), 'utf8'),
    );
  });

  it('keeps a value that holds </script> inside the script', () => {
    const hostile = { ...RUN, apiUrl: 'https://x.test/</script><script>alert(1)</script>' };
    const script = runtimeSettingsScript(hostile);
    expect(script.match(/<\/script>/g)).toHaveLength(1);
    expect(settingsOfPage(script)).toEqual(hostile);
  });
});

describe('the settings a page uses', () => {
  const built: RuntimeSettings = {
    apiUrl: 'http://localhost:8000',
    signUpUrl: '/Introduction/getting-started',
    search: { appId: 'imagegen', apiKey: 'search-only-key', indexName: 'docs', hosts: ['self'] },
  };
  const globals = globalThis as unknown as { window?: Record<string, unknown> };
  afterEach(() => {
    delete globals.window;
  });

  it('are the served ones when the docs host wrote them', () => {
    globals.window = { [RUNTIME_SETTINGS_GLOBAL]: RUN };
    expect(servedRuntimeSettings(built)).toEqual(RUN);
  });

  it('are the build’s on another static host, and during server rendering', () => {
    globals.window = {};
    expect(servedRuntimeSettings(built)).toEqual(built);
    delete globals.window;
    expect(servedRuntimeSettings(built)).toEqual(built);
  });
});

describe('startDocsSite', () => {
  it('serves pages carrying its API address and search settings, and a search service that takes them', async () => {
    const site = await mkdtemp(path.join(tmpdir(), 'docs-site-'));
    try {
      await writeFile(path.join(site, 'index.html'), PAGE);
      await writeFile(path.join(site, '404.html'), NOT_FOUND);
      await writeFile(
        path.join(site, 'search-index.json'),
        JSON.stringify(await indexBuiltSite({ buildDir: site })),
      );
      const docs = await startDocsSite({
        port: 0,
        host: '127.0.0.1',
        buildDir: site,
        apiUrl: 'https://api.example.test:8443/',
        signUpUrl: RUN.signUpUrl,
        search: RUN.search,
      });
      try {
        expect(settingsOfPage(await (await fetch(`${docs.url}/`)).text())).toEqual(RUN);
        const query = (appId: string, apiKey: string) =>
          fetch(
            `${docs.url}/1/indexes/*/queries?${new URLSearchParams({
              'x-algolia-application-id': appId,
              'x-algolia-api-key': apiKey,
            })}`,
            {
              method: 'POST',
              body: JSON.stringify({ requests: [{ indexName: 'run-docs', query: 'relight' }] }),
            },
          );
        const ok = await query('run-app', 'run-key');
        expect(ok.status).toBe(200);
        const { results } = (await ok.json()) as { results: { nbHits: number }[] };
        expect(results[0]!.nbHits).toBeGreaterThan(0);
        expect((await query('imagegen', 'search-only-key')).status).toBe(403);
      } finally {
        await docs.close();
      }
    } finally {
      await rm(site, { recursive: true, force: true });
    }
  });

  it('serves the sign-up address of the environment it runs in, else the getting-started page', async () => {
    const site = await mkdtemp(path.join(tmpdir(), 'docs-site-'));
    const before = process.env.IMAGEGEN_DOCS_SIGNUP_URL;
    const signUpOf = async () => {
      const docs = await startDocsSite({
        port: 0,
        host: '127.0.0.1',
        buildDir: site,
        apiUrl: RUN.apiUrl,
        search: RUN.search,
      });
      try {
        return (settingsOfPage(await (await fetch(`${docs.url}/`)).text()) as RuntimeSettings).signUpUrl;
      } finally {
        await docs.close();
      }
    };
    try {
      await writeFile(path.join(site, 'index.html'), PAGE);
      await writeFile(path.join(site, '404.html'), NOT_FOUND);
      await writeFile(
        path.join(site, 'search-index.json'),
        JSON.stringify(await indexBuiltSite({ buildDir: site })),
      );
      delete process.env.IMAGEGEN_DOCS_SIGNUP_URL;
      expect(await signUpOf()).toBe('/Introduction/getting-started');
      process.env.IMAGEGEN_DOCS_SIGNUP_URL = 'https://accounts.example.test/join/';
      expect(await signUpOf()).toBe('https://accounts.example.test/join');
    } finally {
      if (before === undefined) delete process.env.IMAGEGEN_DOCS_SIGNUP_URL;
      else process.env.IMAGEGEN_DOCS_SIGNUP_URL = before;
      await rm(site, { recursive: true, force: true });
    }
  });
});
