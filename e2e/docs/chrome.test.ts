import { describe, expect, it } from 'vitest';
import { type DocsSite, startDocsSite } from '../support/docs-site.ts';
import { siteAndBrowser } from '../support/site-and-browser.ts';

const DOC = '/Optimised-base-models/Stable-Diffusion-1';

const env = siteAndBrowser(startDocsSite);

async function open(path: string, options: Parameters<DocsSite['newContext']>[1] = {}) {
  const context = await env.site.newContext(env.browser, options);
  const page = await context.newPage();
  await page.goto(env.site.docs.url + encodeURI(path));
  await page.waitForSelector('html[data-has-hydrated="true"]');
  return { context, page };
}

describe('page chrome', () => {
  it('offers "Skip to main content" as the first Tab stop and moves keyboard focus into the page', async () => {
    const { context, page } = await open(DOC);
    await page.keyboard.press('Tab');
    expect(await page.locator(':focus').textContent()).toBe('Skip to main content');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => Boolean(document.activeElement?.closest('main')))).toBe(true);
    await context.close();
  });

  it('starts dark when the system states no colour preference', async () => {
    const context = await env.site.newContext(env.browser);
    await context.addInitScript(() => {
      const original = window.matchMedia.bind(window);
      window.matchMedia = (query: string) =>
        query.includes('prefers-color-scheme')
          ? ({
              matches: false,
              media: query,
              onchange: null,
              addEventListener() {},
              removeEventListener() {},
              addListener() {},
              removeListener() {},
              dispatchEvent: () => false,
            } as MediaQueryList)
          : original(query);
    });
    const page = await context.newPage();
    await page.goto(`${env.site.docs.url}/`);
    await page.waitForSelector('html[data-has-hydrated="true"]');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await context.close();
  });

  it('follows the system colour preference until the reader chooses', async () => {
    const { context, page } = await open('/', { colorScheme: 'light' });
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    await context.close();
  });

  it('keeps a chosen colour mode across a reload and syncs it to another tab', async () => {
    const { context, page } = await open('/');
    const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
    expect(await theme()).toBe('light');
    const other = await context.newPage();
    await other.goto(`${env.site.docs.url}/guide`);
    await other.waitForSelector('html[data-has-hydrated="true"]');
    // The toggle cycles through system, light and dark; click until dark is the stored choice.
    for (let i = 0; i < 3 && (await page.evaluate(() => localStorage.getItem('theme'))) !== 'dark'; i++) {
      await page.getByRole('button', { name: /Switch between dark and light mode/ }).click();
    }
    expect(await theme()).toBe('dark');
    await other.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    await page.reload();
    await page.waitForSelector('html[data-has-hydrated="true"]');
    expect(await theme()).toBe('dark');
    await context.close();
  });

  it('remembers a dismissed announcement across reloads and shows a bar with a new id again', async () => {
    const { context, page } = await open('/');
    const bar = page.locator('[class*="announcementBar"]').first();
    await bar.waitFor();
    await page.getByRole('button', { name: 'Close' }).click();
    await bar.waitFor({ state: 'detached' });
    await page.reload();
    await page.waitForSelector('html[data-has-hydrated="true"]');
    expect(await page.locator('[class*="announcementBar"]').count()).toBe(0);
    // A dismissal stored for another (older) bar id does not hide the current bar.
    await page.evaluate(() => localStorage.setItem('docusaurus.announcement.id', 'an-older-announcement'));
    await page.reload();
    await page.locator('[class*="announcementBar"]').first().waitFor();
    await context.close();
  });

  it('shows the announcement bar in the colours of the mode: dark in dark mode, light in light mode', async () => {
    const luminance = (rgb: string) => {
      const [r, g, b] = rgb.match(/\d+/g)!.map(Number);
      return (0.2126 * r! + 0.7152 * g! + 0.0722 * b!) / 255;
    };
    for (const [colorScheme, dark] of [
      ['dark', true],
      ['light', false],
    ] as const) {
      const { context, page } = await open('/', { colorScheme });
      const bar = page.locator('.theme-announcement-bar');
      await bar.waitFor();
      const [background, text] = await bar.evaluate((el) => {
        const style = getComputedStyle(el);
        return [style.backgroundColor, style.color];
      });
      expect(luminance(background) < 0.3, `${colorScheme} background ${background}`).toBe(dark);
      expect(luminance(text) > 0.6, `${colorScheme} text ${text}`).toBe(dark);
      await context.close();
    }
  });

  it('points Sign-up at a page that exists: the getting-started page, which tells how to get a key', async () => {
    const { context, page } = await open(DOC);
    const signUp = page.locator('.navbar__items--right').getByRole('link', { name: 'Sign-up' });
    expect(await signUp.getAttribute('href')).toBe('/Introduction/getting-started');
    await signUp.click();
    await page.waitForURL(/\/Introduction\/getting-started$/);
    expect(await page.locator('h1').textContent()).toBe('Getting started');
    await context.close();
  });

  it('opens the mobile sidebar at 375 px, goes back to the main menu, and closes it past 996 px', async () => {
    const { context, page } = await open(DOC, { viewport: { width: 375, height: 800 } });
    await page.getByRole('button', { name: 'Toggle navigation bar' }).click();
    const sidebar = page.locator('.navbar-sidebar');
    await page.waitForSelector('.navbar-sidebar--show');
    const back = sidebar.getByRole('button', { name: '← Back to main menu' });
    await back.click();
    await sidebar.getByRole('link', { name: 'API Schema' }).waitFor();
    await sidebar.getByRole('link', { name: 'Sign-up' }).waitFor();
    // 996 px is the last mobile width (the theme's CSS and JS agree); the next one is desktop.
    await page.setViewportSize({ width: 996, height: 800 });
    await page.waitForTimeout(300);
    expect(await page.locator('.navbar-sidebar--show').count()).toBe(1);
    await page.setViewportSize({ width: 997, height: 800 });
    await page.waitForFunction(() => !document.querySelector('.navbar-sidebar--show'));
    await context.close();
  });

  it('shows the docs version Next as a dropdown, with API Schema on the left and Sign-up on the right', async () => {
    const { context, page } = await open(DOC);
    const dropdown = page.locator('.navbar__items--right .dropdown').filter({ hasText: 'Next' });
    expect(await dropdown.count()).toBe(1);
    await dropdown.hover();
    const item = dropdown.locator('.dropdown__menu').getByRole('link', { name: 'Next' });
    await item.waitFor({ state: 'visible' });
    expect(await page.locator('.navbar__items--right .dropdown').filter({ hasText: 'English' }).count()).toBe(
      1,
    );
    expect(
      await page
        .locator('.navbar__items:not(.navbar__items--right)')
        .getByRole('link', { name: 'API Schema' })
        .count(),
    ).toBe(1);
    expect(await page.locator('.navbar__items--right').getByRole('link', { name: 'Sign-up' }).count()).toBe(
      1,
    );
    await item.click();
    expect(await page.evaluate(() => localStorage.getItem('docs-preferred-version-default'))).toBe('current');
    await context.close();
  });

  it('hides the navbar on scroll down and shows it again on scroll up', async () => {
    const { context, page } = await open(DOC);
    const hidden = () =>
      page.evaluate(() => /navbarHidden/.test(document.querySelector('.navbar')!.className));
    expect(await hidden()).toBe(false);
    // The theme compares each scroll position with the previous one, so every step must reach it
    // as its own scroll event: two scrolls in one frame arrive as a single jump from the top.
    const scrollTo = (y: number) =>
      page.evaluate(
        (target) =>
          new Promise<void>((resolve) => {
            window.addEventListener('scroll', () => requestAnimationFrame(() => resolve()), { once: true });
            window.scrollTo(0, target);
          }),
        y,
      );
    for (const y of [200, 600, 1000, 1500]) await scrollTo(y);
    await page.waitForFunction(() => /navbarHidden/.test(document.querySelector('.navbar')!.className));
    await scrollTo(1200);
    await page.waitForFunction(() => !/navbarHidden/.test(document.querySelector('.navbar')!.className));
    await context.close();
  });

  it('lists headings of levels 2 and 3 in the table of contents and collapses sidebar categories', async () => {
    const { context, page } = await open('/Parameters/Schedulers');
    const toc = await page.locator('.table-of-contents a').allTextContents();
    expect(toc).toEqual(expect.arrayContaining(['Values', 'Defaults', 'Text to image (SD1.5)']));
    const category = page.locator('.menu__list-item--collapsed').first();
    await category.locator('.menu__link').first().waitFor();
    const before = await page.locator('.menu__list-item--collapsed').count();
    await page.locator('.menu__list-item--collapsed .menu__caret').first().click();
    await page.waitForFunction(
      (n) => document.querySelectorAll('.menu__list-item--collapsed').length === n - 1,
      before,
    );
    await context.close();
  });

  it('renders the footer link columns with the logo and the copyright years up to the build', async () => {
    const { context, page } = await open('/');
    const footer = page.locator('footer');
    expect(await footer.locator('.footer__title').allTextContents()).toEqual([
      'Docs',
      'Product',
      'Help',
      'Legal',
    ]);
    expect(await footer.locator('img').count()).toBeGreaterThan(0);
    // From the first release to the year the site was built (this run's, or the last new year's).
    const year = new Date().getFullYear();
    expect([`Copyright © 2024–${year} imagegen.`, `Copyright © 2024–${year - 1} imagegen.`]).toContain(
      await footer.locator('.footer__copyright').textContent(),
    );
    await context.close();
  });

  it('sends a page view to the API collector, stored in PostgreSQL, on load and on every route change', async () => {
    await env.site.db.pool.query('TRUNCATE analytics_events');
    const { context, page } = await open('/');
    await page.locator('.navbar').getByRole('link', { name: 'Guides' }).click();
    await page.waitForURL('**/guide');
    await page.locator('article a', { hasText: 'Turn ideas into products' }).first().click();
    await page.waitForURL('**/guide/turn-ideas-into-products');
    const paths = async () =>
      (
        await env.site.db.pool.query<{ path: string }>(
          "SELECT path FROM analytics_events WHERE type = 'page_view' ORDER BY id",
        )
      ).rows.map((r) => r.path);
    await expect.poll(paths, { timeout: 30_000 }).toEqual(['/', '/guide', '/guide/turn-ideas-into-products']);
    await context.close();
  });

  it('shows the progress bar only once a slow route change has taken 200 ms', async () => {
    const context = await env.site.newContext(env.browser);
    let slow = false;
    await context.route('**/assets/js/**', async (route) => {
      if (route.request().resourceType() !== 'script') return route.abort('blockedbyclient');
      if (slow) await new Promise((resolve) => setTimeout(resolve, 1200));
      return route.continue();
    });
    const page = await context.newPage();
    await page.goto(`${env.site.docs.url}/`);
    await page.waitForSelector('html[data-has-hydrated="true"]');
    // Measured in the page: from the click to the moment the bar is inserted.
    await page.evaluate(() => {
      const w = window as unknown as { clickedAt?: number; barAt?: number };
      document.addEventListener('click', () => (w.clickedAt = performance.now()), true);
      new MutationObserver(() => {
        if (!w.barAt && document.getElementById('nprogress')) w.barAt = performance.now();
      }).observe(document.body, { childList: true, subtree: true });
    });
    slow = true;
    await page.locator('.theme-doc-sidebar-menu').getByRole('link', { name: 'Getting started' }).click();
    await page.waitForSelector('#nprogress', { state: 'attached' });
    const delay = await page.evaluate(() => {
      const w = window as unknown as { clickedAt: number; barAt: number };
      return w.barAt - w.clickedAt;
    });
    expect(delay).toBeGreaterThanOrEqual(195);
    await page.getByRole('heading', { level: 1, name: 'Getting started' }).waitFor();
    await page.waitForSelector('#nprogress', { state: 'detached' });
    await context.close();
  });

  it('skips link prefetching on a 2g connection or with data-saver on', async () => {
    for (const connection of [
      { effectiveType: '2g', saveData: false },
      { effectiveType: '4g', saveData: true },
    ]) {
      const context = await env.site.newContext(env.browser);
      await context.addInitScript(
        (c) => Object.defineProperty(navigator, 'connection', { value: c }),
        connection,
      );
      const page = await context.newPage();
      await page.goto(`${env.site.docs.url}/`);
      await page.waitForSelector('html[data-has-hydrated="true"]');
      await page.waitForTimeout(500);
      expect(await page.locator('link[rel="prefetch"]').count()).toBe(0);
      await context.close();
    }
    const { context, page } = await open('/');
    await page.waitForFunction(() => document.querySelectorAll('link[rel="prefetch"]').length > 0);
    await context.close();
  });
});
