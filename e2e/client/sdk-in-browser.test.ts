import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSandboxEngine } from '@imagegen/engine-sandbox/engine';
import { createEngineRegistry } from '@imagegen/engines';
import { createOwner, signWebhook } from '@imagegen/server';
import {
  createTestDatabase,
  type LoopbackApi,
  startLoopbackApi,
  type TestDatabase,
} from '@imagegen/server/testing';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { siteAndBrowser } from '../support/site-and-browser.ts';

/**
 * `@imagegen/client` in Chromium, bundled for the browser as a web page would bundle it, against
 * the real API on another origin: `run` follows a task through its status stream with fetch (the
 * page has no EventSource at all), and `verifyWebhook` checks a signature with Web Crypto.
 */

/** The page loads the SDK as a module and leaves it on `window.imagegen` for the tests. */
const PAGE = `<!doctype html><title>sdk</title>
<script type="module">import * as sdk from '/sdk.js'; window.imagegen = sdk;</script>`;

interface BrowserSite {
  readonly api: LoopbackApi;
  readonly key: string;
  readonly pageUrl: string;
  close(): Promise<void>;
}

async function startBrowserSite(): Promise<BrowserSite> {
  const db: TestDatabase = await createTestDatabase();
  const { apiKey } = await createOwner(db.pool, { name: 'browser', plan: 'UNLIMITED' });
  // Each of the two samples takes 400 ms and progress is written every 50 ms, so the stream
  // always sees the half-way report, however slow the machine.
  const engine = createSandboxEngine({ delayMs: 800 });
  const api = await startLoopbackApi({
    pool: db.pool,
    engines: createEngineRegistry([engine], { enabled: [engine.name], pinned: {} }),
    worker: { pollMs: 100, progressFlushMs: 50 },
  });
  // The SDK's source through the package's exports, bundled for a browser.
  const bundle = await build({
    stdin: { contents: "export * from '@imagegen/client';", resolveDir: import.meta.dirname, loader: 'ts' },
    conditions: ['imagegen-source'],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    write: false,
    logLevel: 'warning',
  });
  const sdk = bundle.outputFiles[0]!.text;
  const server: Server = createServer((request, response) => {
    if (request.url === '/sdk.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(sdk);
    else response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    api,
    key: apiKey,
    pageUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await api.close();
      await db.drop();
    },
  };
}

const env = siteAndBrowser(startBrowserSite);

async function openPage(): Promise<{ page: Page; requests: string[]; close(): Promise<void> }> {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (request) => requests.push(`${request.method()} ${new URL(request.url()).pathname}`));
  await page.goto(env.site.pageUrl);
  await page.waitForFunction(() => 'imagegen' in window);
  // Nothing of the SDK may lean on EventSource.
  await page.evaluate(() => {
    delete (window as { EventSource?: unknown }).EventSource;
  });
  return { page, requests, close: () => context.close() };
}

describe('the SDK in a browser', () => {
  it('runs a task on another origin, following its status stream with fetch', async () => {
    const { page, requests, close } = await openPage();
    const outcome = await page.evaluate(
      async ({ apiUrl, key }) => {
        const { createClient } = (window as unknown as { imagegen: typeof import('@imagegen/client') })
          .imagegen;
        const client = createClient({ apiKey: key, baseUrl: apiUrl });
        const progress: number[] = [];
        const result = await client.run(
          '/sd/text2image/v1',
          { prompt: 'a lighthouse', negative_prompt: '', samples: 2, width: 64, height: 64 },
          { timeoutMs: 30_000, onProgress: (status) => progress.push(status.progress ?? 0) },
        );
        return { result, progress };
      },
      { apiUrl: env.site.api.url, key: env.site.key },
    );
    expect(outcome.result.status).toBe('SUCCESS');
    expect(outcome.result.download_urls).toHaveLength(2);
    expect(outcome.progress).toContain(0.5);
    const statusRequests = requests.filter((line) => line.includes('/status/'));
    expect(statusRequests).toHaveLength(1);
    expect(statusRequests[0]).toMatch(/^GET \/sd\/text2image\/v1\/status\/[^/]+\/events$/);
    await close();
  });

  it('verifies a webhook with Web Crypto, and refuses it tampered', async () => {
    const { page, close } = await openPage();
    const secret = `whsec_${Buffer.from('a browser test secret!!').toString('base64')}`;
    const body = JSON.stringify({ status: 'SUCCESS', download_urls: [] });
    const headers = signWebhook(secret, 'msg_browser', new Date(), body);
    const outcome = await page.evaluate(
      async ({ secret, headers, body }) => {
        const { verifyWebhook } = (window as unknown as { imagegen: typeof import('@imagegen/client') })
          .imagegen;
        const genuine = await verifyWebhook({ secret, headers, body });
        const tampered = await verifyWebhook({
          secret,
          headers,
          body: body.replace('SUCCESS', 'FAILURE'),
        }).then(
          () => 'accepted',
          (error: Error) => error.name,
        );
        return { genuine, tampered };
      },
      { secret, headers: { ...headers }, body },
    );
    expect(outcome).toEqual({ genuine: JSON.parse(body), tampered: 'WebhookVerificationError' });
    await close();
  });
});
