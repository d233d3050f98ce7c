import { describe, expect, it } from 'vitest';
import { startDocsSite } from '../support/docs-site.ts';
import { siteAndBrowser } from '../support/site-and-browser.ts';

const env = siteAndBrowser(startDocsSite);

describe('the error states: a failed page load, a crash, an unknown route', () => {
  it('shows "This page crashed." when a page throws while rendering, and Try again renders it', async () => {
    const context = await env.site.newContext(env.browser);
    // A render-time failure, injected without touching the product: while the flag is set, the
    // date formatting the blog pages run during render throws.
    // Plain source, so the test runner's transpiler cannot change what runs in the page.
    await context.addInitScript({
      content: `(() => {
        const Original = Intl.DateTimeFormat;
        function Patched(...args) {
          if (window.crashRenders) throw new Error('Simulated render failure');
          return new Original(...args);
        }
        Patched.prototype = Original.prototype;
        Patched.supportedLocalesOf = Original.supportedLocalesOf;
        Intl.DateTimeFormat = Patched;
      })();`,
    });
    const page = await context.newPage();
    await page.goto(`${env.site.docs.url}/`);
    await page.waitForSelector('html[data-has-hydrated="true"]');
    await page.evaluate(() => {
      (window as unknown as { crashRenders?: boolean }).crashRenders = true;
    });
    await page.locator('.navbar').getByRole('link', { name: 'Guides' }).click();
    await page.getByRole('heading', { name: 'This page crashed.' }).waitFor();
    const crashed = (await page.locator('main').textContent()) ?? '';
    expect(crashed, crashed).toContain('Simulated render failure');
    await page.evaluate(() => {
      (window as unknown as { crashRenders?: boolean }).crashRenders = false;
    });
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.locator('article').getByRole('link', { name: 'Turn ideas into products' }).first().waitFor();
    expect(await page.getByRole('heading', { name: 'This page crashed.' }).count()).toBe(0);
    await context.close();
  });

  it('shows the load error with a Retry button when a page’s chunk fails, and Retry loads it', async () => {
    const context = await env.site.newContext(env.browser);
    const page = await context.newPage();
    const loaded = new Set<string>();
    let blocking = false;
    await context.route('**/assets/js/**', async (route) => {
      const url = route.request().url();
      // Link prefetches would put the next page's chunks in the cache before the block starts.
      if (route.request().resourceType() !== 'script') return route.abort('blockedbyclient');
      if (blocking && !loaded.has(url)) return route.abort('connectionreset');
      loaded.add(url);
      return route.continue();
    });
    const warnings: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'warning') warnings.push(message.text());
    });
    await page.goto(`${env.site.docs.url}/`);
    await page.waitForSelector('html[data-has-hydrated="true"]');
    // From now on only the chunks the home page already has can load: the next page's cannot.
    blocking = true;
    await page.evaluate(() => {
      (window as unknown as { notReloaded?: boolean }).notReloaded = true;
    });
    await page.locator('.theme-doc-sidebar-menu').getByRole('link', { name: 'Getting started' }).click();
    const alert = page.getByRole('alert').filter({ has: page.getByRole('button', { name: 'Retry' }) });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/chunk/i);
    expect(new URL(page.url()).pathname).toBe('/Introduction/getting-started');
    // The promised behaviour, not a full reload: the page state survived and a warning was logged.
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(
      true,
    );
    expect(warnings.some((w) => /chunk/i.test(w))).toBe(true);

    blocking = false;
    await alert.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('heading', { level: 1, name: 'Getting started' }).waitFor();
    expect(await page.getByRole('button', { name: 'Retry' }).count()).toBe(0);
    await context.close();
  });
});
