import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DocsHost, startDocsHost } from '../../host/docs-host.ts';

let buildDir: string;
let host: DocsHost;

/** fetch() always decompresses; this reads the bytes as sent. */
function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

async function put(relative: string, content: string) {
  const file = path.join(buildDir, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

beforeAll(async () => {
  buildDir = await mkdtemp(path.join(tmpdir(), 'docs-host-'));
  await put('index.html', '<title>Introduction</title>');
  await put('404.html', '<title>Page Not Found</title>');
  await put('guide/index.html', '<title>Guides</title>');
  await put('Specialized Models/Remove & Change Background/index.html', '<title>Remove &amp; Change</title>');
  await put('assets/js/main.0123abcd.js', `console.log(${JSON.stringify('x'.repeat(5000))});`);
  await writeFile(path.join(path.dirname(buildDir), 'secret.txt'), 'outside the build');
  host = await startDocsHost({
    port: 0,
    buildDir,
    handlers: [
      (req, res) => {
        if (req.method !== 'POST' || req.url !== '/1/indexes/*/queries') return false;
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"results":[]}');
        return true;
      },
    ],
  });
});

afterAll(async () => {
  await host.close();
  await rm(buildDir, { recursive: true, force: true });
  await rm(path.join(path.dirname(buildDir), 'secret.txt'), { force: true });
});

describe('startDocsHost', () => {
  it('serves the home page and a route folder’s index.html', async () => {
    const home = await fetch(`${host.url}/`);
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await home.text()).toContain('<title>Introduction</title>');
    const guide = await fetch(`${host.url}/guide`);
    expect(await guide.text()).toContain('<title>Guides</title>');
  });

  it('serves paths with spaces and an ampersand as the routes spell them', async () => {
    const res = await fetch(`${host.url}/Specialized%20Models/Remove%20&%20Change%20Background`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Remove &amp; Change');
  });

  it('answers an unknown path with the not-found page and HTTP 404', async () => {
    const res = await fetch(`${host.url}/no/such/page`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('Page Not Found');
  });

  it('redirects a trailing index.html or .html to the stripped path, keeping the query', async () => {
    const index = await fetch(`${host.url}/guide/index.html?q=1`, { redirect: 'manual' });
    expect(index.status).toBe(301);
    expect(index.headers.get('location')).toBe('/guide?q=1');
    const html = await fetch(`${host.url}/guide.html`, { redirect: 'manual' });
    expect(html.headers.get('location')).toBe('/guide');
    const root = await fetch(`${host.url}/index.html`, { redirect: 'manual' });
    expect(root.headers.get('location')).toBe('/');
  });

  it('gzips text files for clients that accept it and caches hashed assets for a year', async () => {
    const { headers, body } = await rawGet(`${host.url}/assets/js/main.0123abcd.js`, {
      'accept-encoding': 'gzip',
    });
    expect(headers['content-encoding']).toBe('gzip');
    expect(headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(body.length).toBeLessThan(1000);
    expect(gunzipSync(body).toString()).toContain('xxxx');
  });

  it('never serves a file outside the build folder', async () => {
    const res = await fetch(`${host.url}/..%2Fsecret.txt`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('outside the build');
  });

  it('lets a mounted handler answer before the static files, and refuses other methods', async () => {
    const search = await fetch(`${host.url}/1/indexes/*/queries`, { method: 'POST', body: '{}' });
    expect(await search.json()).toEqual({ results: [] });
    const post = await fetch(`${host.url}/guide`, { method: 'POST' });
    expect(post.status).toBe(405);
  });
});
