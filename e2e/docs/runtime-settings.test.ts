import { buildOpenApi } from '@imagegen/contract';
import { type DocsHost, startDocsSite } from '@imagegen/docs/host';
import { siteLinks } from '@imagegen/docs/site-links';
import { listSearchEvents, type SearchSettings } from '@imagegen/search';
import { createTestDatabase, type TestDatabase } from '@imagegen/server/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { DESKTOP } from '../support/chromium.ts';
import { BUILD_DIR } from '../support/docs-site.ts';
import { siteAndBrowser } from '../support/site-and-browser.ts';

/**
 * The built site started the way `npm start` starts it, with another API address and other
 * search credentials and index than the build was made with: the pages must use those of the run.
 */
const RUN_SIGN_UP = 'https://accounts.example.test/join';

const RUN_SEARCH: SearchSettings = {
  appId: 'run-time-app',
  apiKey: 'run-time-key',
  indexName: 'run-time-docs',
  hosts: ['self'],
};

interface RunSite {
  docs: DocsHost;
  api: { url: string; app: FastifyInstance; schemaReads: number };
  db: TestDatabase;
  close(): Promise<void>;
}

async function startRunSite(): Promise<RunSite> {
  const db = await createTestDatabase();
  const app = Fastify();
  const api = { url: '', app, schemaReads: 0 };
  const openapi = JSON.stringify(buildOpenApi());
  app.get('/openapi.json', async (_request, reply) => {
    api.schemaReads += 1;
    return reply.header('Access-Control-Allow-Origin', '*').type('application/json').send(openapi);
  });
  api.url = await app.listen({ port: 0, host: '127.0.0.1' });
  const docs = await startDocsSite({
    port: 0,
    host: '127.0.0.1',
    buildDir: BUILD_DIR,
    apiUrl: api.url,
    signUpUrl: RUN_SIGN_UP,
    search: RUN_SEARCH,
    pool: db.pool,
  });
  return {
    docs,
    api,
    db,
    async close() {
      await docs.close();
      await app.close();
      await db.drop();
    },
  };
}

const env = siteAndBrowser(startRunSite);
let context: BrowserContext | undefined;
afterEach(async () => {
  await context?.close();
  context = undefined;
});

/** A page of the site; every request it makes is recorded, and any leaving loopback is aborted. */
async function open(path: string): Promise<{ page: Page; requested: string[] }> {
  context = await env.browser.newContext(DESKTOP);
  const requested: string[] = [];
  context.on('request', (request) => requested.push(request.url()));
  await context.route(
    (url) => url.hostname !== '127.0.0.1' && url.hostname !== 'localhost',
    (route) => route.abort(),
  );
  const page = await context.newPage();
  await page.goto(`${env.site.docs.url}${encodeURI(path)}`);
  await page.waitForSelector('html[data-has-hydrated="true"]');
  return { page, requested };
}

describe('a built site started with other settings than its build', () => {
  it('renders /schema from the API at the address of the run', async () => {
    const built = siteLinks().apiUrl;
    expect(built).not.toBe(env.site.api.url);
    const { page, requested } = await open('/schema');
    await page.locator('.scalar-app').first().waitFor({ timeout: 60_000 });
    await page.getByText('Text to image (SD1.5)').first().waitFor({ timeout: 60_000 });
    expect(await page.getByText('Failed to fetch document').count()).toBe(0);
    expect(env.site.api.schemaReads).toBeGreaterThan(0);
    expect(requested).toContain(`${env.site.api.url}/openapi.json`);
    expect(requested.filter((url) => url.startsWith(built))).toEqual([]);
  });

  it('finds hits in the search modal with the credentials and index of the run', async () => {
    const { page, requested } = await open('/Introduction/getting-started');
    await page.keyboard.press('Control+k');
    await page.locator('.DocSearch-Input').fill('relight');
    const hits = page.locator('.DocSearch-Dropdown-Results .DocSearch-Hit');
    await expect.poll(() => hits.count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await page.getByText('Unable to fetch results').count()).toBe(0);
    const searches = requested.filter((url) => url.includes('/1/indexes/'));
    expect(searches.length).toBeGreaterThan(0);
    for (const url of searches) {
      expect(new URL(url).searchParams.get('x-algolia-application-id')).toBe(RUN_SEARCH.appId);
      expect(new URL(url).searchParams.get('x-algolia-api-key')).toBe(RUN_SEARCH.apiKey);
    }
    // The view event of the hits shown goes to the run's index too.
    await expect
      .poll(async () => (await listSearchEvents(env.site.db.pool, 1))[0]?.index_name, { timeout: 30_000 })
      .toBe(RUN_SEARCH.indexName);
  });

  it('points the navbar’s Sign-up at the address of the run, on the desktop and in the mobile menu', async () => {
    expect(siteLinks().signUp).not.toBe(RUN_SIGN_UP);
    const { page } = await open('/Introduction/getting-started');
    const signUp = page.locator('.navbar__items--right').getByRole('link', { name: 'Sign-up' });
    await expect.poll(() => signUp.getAttribute('href')).toBe(RUN_SIGN_UP);
    await page.setViewportSize({ width: 375, height: 800 });
    await page.getByRole('button', { name: 'Toggle navigation bar' }).click();
    const sidebar = page.locator('.navbar-sidebar');
    await page.waitForSelector('.navbar-sidebar--show');
    const back = sidebar.getByRole('button', { name: '← Back to main menu' });
    if (await back.isVisible()) await back.click();
    expect(await sidebar.getByRole('link', { name: 'Sign-up' }).getAttribute('href')).toBe(RUN_SIGN_UP);
  });

  it('serves /search?q= from the index of the run', async () => {
    const { page } = await open('/search?q=face%20lock');
    const first = page.locator('article h2 a').first();
    await first.waitFor({ timeout: 30_000 });
    expect(await first.textContent()).toBe('Face lock');
  });
});
