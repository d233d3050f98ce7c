import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { seriousViolations } from '../support/axe.ts';
import { startDocsSite } from '../support/docs-site.ts';
import { siteAndBrowser } from '../support/site-and-browser.ts';

const DOC = '/Optimised-base-models/Stable-Diffusion-1';
const JS_BUDGET_GZIP = 250 * 1024;

const env = siteAndBrowser(startDocsSite);

/** Opens a page and records the bodies of the scripts and stylesheets it loads. */
async function openRecording(
  path: string,
): Promise<{ page: Page; close(): Promise<void>; js: Buffer[]; css: Buffer[] }> {
  const context = await env.site.newContext(env.browser);
  const page = await context.newPage();
  const js: Buffer[] = [];
  const css: Buffer[] = [];
  const pending: Promise<void>[] = [];
  page.on('response', (response) => {
    const type = response.request().resourceType();
    if (type !== 'script' && type !== 'stylesheet') return;
    pending.push(
      response
        .body()
        .then((body) => {
          (type === 'script' ? js : css).push(body);
        })
        .catch(() => {}),
    );
  });
  await page.goto(env.site.docs.url + encodeURI(path));
  await page.waitForSelector('html[data-has-hydrated="true"]');
  await page.waitForLoadState('networkidle');
  await Promise.all(pending);
  return { page, js, css, close: () => context.close() };
}

async function waitForScalar(page: Page) {
  await page.locator('.scalar-app').first().waitFor({ timeout: 60_000 });
  await page.getByText('Text to image (SD1.5)').first().waitFor({ timeout: 60_000 });
  await page.waitForLoadState('networkidle');
}

describe('accessibility', () => {
  for (const [name, path] of [
    ['the home page', '/'],
    ['a doc page', DOC],
  ] as const) {
    it(`finds no serious or critical axe violations on ${name}`, async () => {
      const { page, close } = await openRecording(path);
      expect(await seriousViolations(page)).toEqual([]);
      await close();
    });
  }

  it('finds no serious or critical axe violations on /schema', async () => {
    const { page, close } = await openRecording('/schema');
    await waitForScalar(page);
    expect(await seriousViolations(page)).toEqual([]);
    await close();
  });
});

describe('page weight', () => {
  it('ships at most 250 KB of gzipped JavaScript on a doc page', async () => {
    const { js, css, close } = await openRecording(DOC);
    const gzipped = js.reduce((sum, body) => sum + gzipSync(body).length, 0);
    console.log(`doc page JavaScript: ${js.length} files, ${(gzipped / 1024).toFixed(1)} KB gzipped`);
    expect(gzipped).toBeGreaterThan(0);
    expect(gzipped).toBeLessThanOrEqual(JS_BUDGET_GZIP);
    // The API reference's code and stylesheet stay on /schema.
    expect(js.some((body) => body.includes('scalar-app'))).toBe(false);
    expect(css.some((body) => body.includes('.scalar-app'))).toBe(false);
    await close();
  });
});

describe('/schema', () => {
  it('renders the contract’s OpenAPI document from the API host under our name, without vendor panels', async () => {
    const { page, close } = await openRecording('/schema');
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await waitForScalar(page);
    expect(await page.title()).toContain('imagegen');
    expect(await page.title()).not.toMatch(/scalar/i);
    // innerText: what is shown, without the text of Scalar's <style> elements.
    const text = await page.locator('main.imagegen-schema').innerText();
    expect(text).toContain('imagegen API');
    expect(text).not.toMatch(/Powered by Scalar|Open API Client|Ask AI/i);
    // The navbar stays the site's own and sits below Scalar's dialogs.
    expect(await page.locator('.navbar').getByRole('link', { name: 'API Schema' }).count()).toBe(1);
    await close();
  });
});

describe('/schema: the API-Key field', () => {
  const keyField = (page: Page) => page.locator('.scalar-app input.scalar-password-input').first();

  it('starts empty, its placeholder asking for your key rather than showing a sample value', async () => {
    const { page, close } = await openRecording('/schema');
    await waitForScalar(page);
    await keyField(page).waitFor({ state: 'attached', timeout: 30_000 });
    expect(await keyField(page).inputValue()).toBe('');
    await expect.poll(() => keyField(page).getAttribute('placeholder')).toBe('your API key');
    expect(await page.locator('[placeholder="QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT"]').count()).toBe(0);
    await close();
  });

  it('starts with the key the playground keeps in this browser', async () => {
    const context = await env.site.newContext(env.browser);
    await context.addInitScript(() =>
      localStorage.setItem('imagegen.playground.apiKey', 'ig_kept_by_the_playground'),
    );
    const page = await context.newPage();
    await page.goto(`${env.site.docs.url}/schema`);
    await waitForScalar(page);
    await keyField(page).waitFor({ state: 'attached', timeout: 30_000 });
    expect(await keyField(page).inputValue()).toBe('ig_kept_by_the_playground');
    await context.close();
  });
});
