import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from './chromium.ts';

/**
 * For one test file: starts its site (the docs site, the search site) and Chromium before the
 * file's tests and stops both after them. The handles are filled in by the time tests run.
 */
export function siteAndBrowser<S extends { close(): Promise<void> }>(
  start: () => Promise<S>,
): { readonly site: S; readonly browser: Browser } {
  const handles = {} as { site: S; browser: Browser };
  beforeAll(async () => {
    handles.site = await start();
    handles.browser = await launchChromium();
  });
  afterAll(async () => {
    await handles.browser?.close();
    await handles.site?.close();
  });
  return handles;
}
