import { type Browser, type BrowserContextOptions, chromium } from 'playwright-core';

/** Debian's Chromium; no browser is downloaded. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
}

/** Desktop defaults: wide enough for the desktop layout (996 px breakpoint), no colour preference. */
export const DESKTOP: BrowserContextOptions = {
  viewport: { width: 1280, height: 900 },
  colorScheme: 'no-preference',
};
