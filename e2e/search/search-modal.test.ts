import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { listSearchEvents } from '@imagegen/search';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { siteAndBrowser } from '../support/site-and-browser.ts';
import { SITE_DIR, startSearchSite } from './search-site.ts';

let context: BrowserContext;

const env = siteAndBrowser(startSearchSite);
afterEach(async () => {
  env.site.fault = 'none';
  await context?.close();
});

const RECENT = '__DOCSEARCH_RECENT_SEARCHES__docs';
const FAVORITE = '__DOCSEARCH_FAVORITE_SEARCHES__docs';

async function openDocsPage(path = '/Introduction/getting-started', options = {}): Promise<Page> {
  context = await env.site.newContext(env.browser, options);
  const page = await context.newPage();
  await page.goto(`${env.site.docs.url}${encodeURI(path)}`);
  await page.waitForSelector('html[data-has-hydrated="true"]');
  return page;
}

const modal = (page: Page) => page.locator('.DocSearch-Modal');
const input = (page: Page) => page.locator('.DocSearch-Input');
const hits = (page: Page) => page.locator('.DocSearch-Dropdown-Results .DocSearch-Hit');

async function search(page: Page, query: string): Promise<void> {
  if (!(await modal(page).isVisible())) await page.keyboard.press('Control+k');
  await input(page).fill(query);
}

async function text(locator: Locator): Promise<string> {
  return (await locator.textContent()) ?? '';
}

async function selectedHitPath(page: Page): Promise<string> {
  const href = await page.locator('.DocSearch-Hit[aria-selected="true"] a').getAttribute('href');
  return decodeURI(href ?? '');
}

describe('search modal: opening and closing', () => {
  it('opens with Ctrl+K and closes with Escape', async () => {
    const page = await openDocsPage();
    await page.keyboard.press('Control+k');
    await expect.poll(() => modal(page).isVisible()).toBe(true);
    await expect.poll(() => page.evaluate(() => document.activeElement?.className)).toBe('DocSearch-Input');
    await page.keyboard.press('Escape');
    await expect.poll(() => modal(page).isVisible()).toBe(false);
  });

  it('opens with Cmd+K (Meta) as on macOS', async () => {
    const page = await openDocsPage();
    await page.keyboard.press('Meta+k');
    await expect.poll(() => modal(page).isVisible()).toBe(true);
  });

  it("opens with '/' when not typing in a field, and not while typing in one", async () => {
    const page = await openDocsPage();
    await page.evaluate(() => {
      const field = document.createElement('input');
      field.id = 'other-field';
      document.querySelector('main')?.prepend(field);
    });
    await page.focus('#other-field');
    await page.keyboard.press('/');
    expect(await page.inputValue('#other-field')).toBe('/');
    expect(await modal(page).isVisible()).toBe(false);
    await page.locator('main h1').first().click();
    await page.keyboard.press('/');
    await expect.poll(() => modal(page).isVisible()).toBe(true);
    expect(await input(page).inputValue()).toBe('');
  });

  it('keeps the query after the first Escape and clears it with a second', async () => {
    const page = await openDocsPage();
    await search(page, 'relight');
    await page.keyboard.press('Escape');
    await expect.poll(() => modal(page).isVisible()).toBe(false);
    await page.keyboard.press('Control+k');
    expect(await input(page).inputValue()).toBe('relight');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+k');
    expect(await input(page).inputValue()).toBe('');
  });

  it('caps the input at 64 characters', async () => {
    const page = await openDocsPage();
    await page.keyboard.press('Control+k');
    await input(page).pressSequentially('x'.repeat(70));
    expect(await input(page).inputValue()).toHaveLength(64);
    expect(await input(page).getAttribute('maxlength')).toBe('64');
  });
});

describe('search modal: results', () => {
  it('finds Face lock from the typo facelok, grouped by page with highlighted titles', async () => {
    const page = await openDocsPage();
    await search(page, 'facelok');
    await expect.poll(() => hits(page).count()).toBeGreaterThan(0);
    const first = page.locator('.DocSearch-Hits').first();
    expect(await text(first.locator('.DocSearch-Hit-source'))).toBe('Face lock');
    expect(await text(first.locator('.DocSearch-Hit').first().locator('mark'))).toBe('Face lock');
  });

  it('shows at most 5 hits per page group and at most 20 hits', async () => {
    const page = await openDocsPage();
    await search(page, 'image');
    await expect.poll(() => hits(page).count()).toBeGreaterThan(5);
    const counts = await page
      .locator('.DocSearch-Dropdown-Results .DocSearch-Hits')
      .evaluateAll((groups) => groups.map((g) => g.querySelectorAll('.DocSearch-Hit').length));
    expect(Math.max(...counts)).toBeLessThanOrEqual(5);
    expect(counts.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(20);
    expect(await text(page.locator('.DocSearch-HitsFooter'))).toMatch(/^See all \d+ results$/);
  });

  it('snippets content to 10 words, and to 5 on screens up to 768 px', async () => {
    const words = (text: string) => text.replace(/…/g, ' ').split(/\s+/).filter(Boolean).length;
    const wide = await openDocsPage();
    await search(wide, 'identity encoder');
    const wideTitle = wide.locator('.DocSearch-Hit[data-hit-type="content"] .DocSearch-Hit-title').first();
    await wideTitle.waitFor();
    expect(words(await text(wideTitle))).toBeGreaterThan(5);
    expect(words(await text(wideTitle))).toBeLessThanOrEqual(10);
    await context.close();

    const narrow = await openDocsPage('/Introduction/getting-started', {
      viewport: { width: 768, height: 900 },
    });
    await search(narrow, 'identity encoder');
    const narrowTitle = narrow
      .locator('.DocSearch-Hit[data-hit-type="content"] .DocSearch-Hit-title')
      .first();
    await narrowTitle.waitFor();
    expect(words(await text(narrowTitle))).toBeLessThanOrEqual(5);
  });

  it('moves through hits with the arrow keys and opens the selected one with Enter', async () => {
    const page = await openDocsPage();
    await search(page, 'schedulers');
    await expect.poll(() => hits(page).count()).toBeGreaterThan(2);
    expect(await selectedHitPath(page)).toBe('/Parameters/Schedulers');
    await page.keyboard.press('ArrowDown');
    const second = await selectedHitPath(page);
    expect(second).toMatch(/^\/Parameters\/Schedulers#/);
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    const last = await selectedHitPath(page);
    expect(last).not.toBe(second);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect.poll(() => decodeURI(new URL(page.url()).pathname + new URL(page.url()).hash)).toBe(second);
    expect(await modal(page).isVisible()).toBe(false);
  });

  it('opens the selected hit in a new tab with Ctrl+Enter and in a new window with Shift+Enter', async () => {
    const page = await openDocsPage();
    await page.evaluate(() => {
      const calls: string[][] = [];
      (window as unknown as { openCalls: string[][] }).openCalls = calls;
      const original = window.open.bind(window);
      window.open = (url?: string | URL, target?: string, features?: string) => {
        calls.push([String(url), String(target), String(features)]);
        return original(url, target, features);
      };
    });
    await search(page, 'relight');
    await expect.poll(() => hits(page).count()).toBeGreaterThan(0);
    const tab = context.waitForEvent('page');
    await page.keyboard.press('Control+Enter');
    const opened = await tab;
    await opened.waitForLoadState();
    expect(decodeURI(new URL(opened.url()).pathname)).toBe('/Specialized Models/Relight');
    const window2 = context.waitForEvent('page');
    await page.keyboard.press('Shift+Enter');
    await window2;
    const calls = await page.evaluate(() => (window as unknown as { openCalls: string[][] }).openCalls);
    expect(calls.map((c) => c.slice(1))).toEqual([
      ['_blank', 'noopener'],
      ['_blank', 'noopener,popup'],
    ]);
    // The modal stays open on the first page after a new tab or window.
    expect(await modal(page).isVisible()).toBe(true);
  });

  it('shows the stalled state after 300 ms of loading and leaves it when the answer comes', async () => {
    // The page's clock is stopped and moved by the test, and the answer is held until the test
    // lets it go: what is checked is the 300 ms threshold itself, whatever the machine's load.
    const page = await openDocsPage();
    await page.clock.install();
    await page.clock.pauseAt(new Date(Date.now() + 60_000));
    let answer = () => {};
    env.site.fault = { hold: new Promise<void>((resolve) => (answer = resolve)) };
    await search(page, 'upscale');
    const container = page.locator('.DocSearch-Container');
    await expect.poll(() => container.getAttribute('data-status')).toBe('loading');
    await page.clock.runFor(299);
    expect(await container.getAttribute('data-status')).toBe('loading');
    await page.clock.runFor(1);
    await expect.poll(() => container.getAttribute('data-status')).toBe('stalled');
    expect(await page.locator('.DocSearch-LoadingIndicator').isVisible()).toBe(true);
    answer();
    // Well inside the client's 1 s connect timeout on the page's clock.
    await expect
      .poll(
        async () => {
          await page.clock.runFor(10);
          return container.getAttribute('data-status');
        },
        { timeout: 30_000 },
      )
      .toBe('idle');
    expect(await hits(page).count()).toBeGreaterThan(0);
  });
});

describe('search modal: screens and texts', () => {
  it("shows 'No recent searches' on a first visit", async () => {
    const page = await openDocsPage();
    await page.keyboard.press('Control+k');
    await expect.poll(() => page.locator('.DocSearch-StartScreen').textContent()).toBe('No recent searches');
  });

  it("shows 'No results for' the query, 'Try searching for' up to 3 suggestions, and the 'Let us know.' link", async () => {
    const page = await openDocsPage();
    await search(page, 'controlnet');
    await expect.poll(() => hits(page).count()).toBeGreaterThan(0);
    await search(page, 'zzzqqq');
    const screen = page.locator('.DocSearch-NoResults');
    await screen.waitFor();
    expect(await text(screen.locator('.DocSearch-Title'))).toBe('No results for "zzzqqq"');
    expect(await text(screen)).toContain('Try searching for');
    const suggestions = screen.locator('.DocSearch-Prefill');
    expect(await suggestions.count()).toBeGreaterThan(0);
    expect(await suggestions.count()).toBeLessThanOrEqual(3);
    expect(await text(screen)).toContain('Believe this query should return results?');
    const link = screen.getByRole('link', { name: 'Let us know.' });
    expect(await link.getAttribute('href')).toContain('zzzqqq');
    const first = await text(suggestions.first());
    await suggestions.first().click();
    expect(await input(page).inputValue()).toBe(first.toLowerCase());
    await expect.poll(() => hits(page).count()).toBeGreaterThan(0);
  });

  it("shows 'Unable to fetch results' when the service answers 500", async () => {
    const page = await openDocsPage();
    env.site.fault = 'error-500';
    await search(page, 'relight');
    const screen = page.locator('.DocSearch-ErrorScreen');
    await screen.waitFor({ timeout: 30_000 });
    expect(await text(screen.locator('.DocSearch-Title'))).toBe('Unable to fetch results');
    expect(await text(screen.locator('.DocSearch-Help'))).toBe(
      'You might want to check your network connection.',
    );
    expect(await page.locator('.DocSearch-Container').getAttribute('data-status')).toBe('error');
  });

  it("shows 'Unable to fetch results' when the service is stopped (connections dropped)", async () => {
    const page = await openDocsPage();
    env.site.fault = 'down';
    await search(page, 'relight');
    await page.locator('.DocSearch-ErrorScreen').waitFor({ timeout: 30_000 });
    expect(await text(page.locator('.DocSearch-ErrorScreen .DocSearch-Title'))).toBe(
      'Unable to fetch results',
    );
    // Back up, the next query works again.
    env.site.fault = 'none';
    await search(page, 'upscale');
    await expect.poll(() => hits(page).count(), { timeout: 30_000 }).toBeGreaterThan(0);
  });
});

describe('search modal: recent and favorite searches', () => {
  const stored = (page: Page, key: string) =>
    page.evaluate(
      (k) => JSON.parse(localStorage.getItem(k) ?? '[]') as { objectID: string; type: string }[],
      key,
    );

  async function pick(page: Page, query: string, type?: string): Promise<void> {
    await search(page, query);
    const target = type
      ? page.locator(`.DocSearch-Dropdown-Results .DocSearch-Hit[data-hit-type="${type}"] a`).first()
      : hits(page).first().locator('a');
    await target.waitFor();
    await target.click();
    await expect.poll(() => modal(page).isVisible()).toBe(false);
  }

  it('keeps selected hits as recent searches, newest first, under a key per index', async () => {
    const page = await openDocsPage();
    await pick(page, 'relight');
    await pick(page, 'upscale');
    const recent = await stored(page, RECENT);
    expect(recent).toHaveLength(2);
    await page.keyboard.press('Control+k');
    const titles = await page.locator('[data-section="recent"] .DocSearch-Hit-title').allTextContents();
    expect(titles).toEqual(['Upscale', 'Relight']);
  });

  it('stores a content hit as its parent page hit', async () => {
    const page = await openDocsPage();
    await search(page, 'identity encoder');
    const contentHit = page
      .locator('.DocSearch-Dropdown-Results .DocSearch-Hit[data-hit-type="content"] a')
      .first();
    await contentHit.waitFor();
    const pagePath = decodeURI((await contentHit.getAttribute('href'))!.split('#')[0]!);
    expect(pagePath).toBe('/Pipelines/Face Control/Face lock');
    await contentHit.click();
    const recent = await stored(page, RECENT);
    expect(recent).toHaveLength(1);
    expect(recent[0]!.type).toBe('lvl1');
    expect(decodeURI(new URL((recent[0] as unknown as { url: string }).url).pathname)).toBe(pagePath);
    // The page reached directly is the same stored search, not a second one.
    await pick(page, 'face lock', 'lvl1');
    expect(await stored(page, RECENT)).toHaveLength(1);
  });

  it('keeps 7 recent searches, then 4 once a favorite exists, and at most 10 favorites', async () => {
    const page = await openDocsPage();
    const many = Array.from({ length: 12 }, (_, i) => ({
      objectID: `o${i}`,
      url: `${env.site.docs.url}/Parameters/Schedulers#section-${i}`,
      type: 'lvl2',
      hierarchy: { lvl0: 'Parameters', lvl1: 'Schedulers', lvl2: `Section ${i}` },
    }));
    await page.evaluate(([key, items]) => localStorage.setItem(key as string, JSON.stringify(items)), [
      RECENT,
      many,
    ] as const);
    await page.keyboard.press('Control+k');
    const recentRows = page.locator('[data-section="recent"] .DocSearch-Hit');
    await expect.poll(() => recentRows.count()).toBe(7);
    await recentRows.first().locator('button[title="Save this search"]').click();
    await expect.poll(() => recentRows.count()).toBe(4);
    expect(await page.locator('[data-section="favorite"] .DocSearch-Hit').count()).toBe(1);
    expect((await stored(page, RECENT)).some((item) => item.objectID === 'o0')).toBe(false);

    await page.evaluate(([key, items]) => localStorage.setItem(key as string, JSON.stringify(items)), [
      FAVORITE,
      many,
    ] as const);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+k');
    await expect.poll(() => page.locator('[data-section="favorite"] .DocSearch-Hit').count()).toBe(10);
  });

  it('saves nothing to recent when the page is already a favorite', async () => {
    const page = await openDocsPage();
    await pick(page, 'relight');
    await page.keyboard.press('Control+k');
    await page.locator('[data-section="recent"] button[title="Save this search"]').first().click();
    expect(await stored(page, RECENT)).toHaveLength(0);
    expect(await stored(page, FAVORITE)).toHaveLength(1);
    await page.keyboard.press('Escape');
    await pick(page, 'relight', 'lvl1');
    expect(await stored(page, RECENT)).toHaveLength(0);
  });

  it('removes a recent search and a favorite with their buttons', async () => {
    const page = await openDocsPage();
    await pick(page, 'relight');
    await pick(page, 'upscale');
    await page.keyboard.press('Control+k');
    await page
      .locator('[data-section="recent"] button[title="Remove this search from history"]')
      .first()
      .click();
    await expect.poll(async () => (await stored(page, RECENT)).length).toBe(1);
    await page.locator('[data-section="recent"] button[title="Save this search"]').first().click();
    await page
      .locator('[data-section="favorite"] button[title="Remove this search from favorites"]')
      .first()
      .click();
    expect(await stored(page, FAVORITE)).toHaveLength(0);
    await expect.poll(() => page.locator('.DocSearch-StartScreen').textContent()).toBe('No recent searches');
  });

  it('saves nothing when personalization is disabled (Global Privacy Control)', async () => {
    context = await env.site.newContext(env.browser);
    await context.addInitScript({
      content: `Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true });`,
    });
    const page = await context.newPage();
    await page.goto(`${env.site.docs.url}/Introduction/getting-started`);
    await page.waitForSelector('html[data-has-hydrated="true"]');
    await pick(page, 'relight');
    expect(await stored(page, RECENT)).toHaveLength(0);
    await page.keyboard.press('Control+k');
    expect(await page.locator('.DocSearch-StartScreen').count()).toBe(0);
  });
});

describe('search page and network', () => {
  it('serves /search?q= from the self-hosted service', async () => {
    const page = await openDocsPage('/search?q=face%20lock');
    const first = page.locator('article h2 a').first();
    await first.waitFor({ timeout: 30_000 });
    expect(await text(first)).toBe('Face lock');
    expect(env.site.searchRequests.some((r) => r.startsWith('POST /1/indexes/'))).toBe(true);
  });

  it('sends a view event for hits shown 400 ms, and a click event, that the service stores', async () => {
    const count = async () => (await listSearchEvents(env.site.db.pool, 1000)).length;
    const before = await count();
    const page = await openDocsPage();
    // The page's clock is the test's: hits shown for less than 400 ms (replaced by the next
    // keystroke's) send no view event however slowly the machine runs, the last ones do at 400 ms.
    await page.clock.install();
    await page.clock.pauseAt(new Date(Date.now() + 60_000));
    const container = page.locator('.DocSearch-Container');
    const shownFor = async (query: string, ms: number) => {
      const asked = env.site.searchRequests.length;
      await search(page, query);
      // This query's answer is shown: its request was served and the modal is idle again.
      await expect
        .poll(async () => {
          await page.clock.runFor(1);
          const status = await container.getAttribute('data-status');
          return (
            env.site.searchRequests.length > asked && status === 'idle' && (await hits(page).count()) > 0
          );
        })
        .toBe(true);
      await page.clock.runFor(ms);
    };
    await shownFor('rel', 300);
    await shownFor('relight', 350);
    expect(await count()).toBe(before);
    await page.clock.runFor(60);
    await expect.poll(count, { timeout: 30_000 }).toBe(before + 1);
    await page.keyboard.press('Enter');
    await expect.poll(count, { timeout: 30_000 }).toBe(before + 2);
    const events = (await listSearchEvents(env.site.db.pool, 2)).reverse();
    expect(events.map((e) => e.event_type)).toEqual(['view', 'click']);
    expect(events[0]!.object_ids.length).toBeGreaterThan(0);
    expect(events[1]!.query_id).toMatch(/^[0-9a-f]{32}$/);
    expect(events[1]!.positions).toEqual([1]);
    expect(events[1]!.object_ids[0]).toBe(events[0]!.object_ids[0]);
  });

  it('sends a conversion event when a recent search is saved as a favorite', async () => {
    const page = await openDocsPage();
    await search(page, 'upscale');
    await hits(page).first().locator('a').click();
    await page.keyboard.press('Control+k');
    await page.locator('[data-section="recent"] button[title="Save this search"]').first().click();
    await expect
      .poll(async () => (await listSearchEvents(env.site.db.pool, 1))[0]?.event_type, { timeout: 30_000 })
      .toBe('conversion');
  });

  it('sends no request to a host other than the docs host, and the built HTML has no algolia.net', async () => {
    env.site.outside.length = 0;
    const page = await openDocsPage();
    await search(page, 'relight');
    await expect.poll(() => hits(page).count()).toBeGreaterThan(0);
    await page.goto(`${env.site.docs.url}/search?q=relight`);
    await page.locator('article h2 a').first().waitFor({ timeout: 30_000 });
    expect(env.site.outside.filter((url) => url.includes('algolia'))).toEqual([]);
    // Every built page: no preconnect to, or mention of, algolia.net.
    const pages = (await readdir(SITE_DIR, { recursive: true })).filter((file) => file.endsWith('.html'));
    expect(pages.length).toBeGreaterThan(50);
    for (const file of pages) {
      const html = await readFile(path.join(SITE_DIR, file), 'utf8');
      expect(html, file).not.toContain('algolia.net');
    }
  });
});
