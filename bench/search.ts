/**
 * Docs search latency, on loopback, over the real index of the built docs:
 *  - server side: the query engine's time per query (what `processingTimeMS` reports), for each
 *    keystroke of realistic queries (every prefix, as the modal sends them), and the same over
 *    HTTP (`POST /1/indexes/*\/queries` with the modal's request body);
 *  - in the browser: from a keystroke in the modal to its hits in the DOM, in Debian's Chromium.
 * Targets: server p99 <= 2 ms, keystroke-to-hits <= 50 ms.
 *
 *   npm run --silent bench -- search      (last line: one JSON object)
 *
 * Uses packages/docs/build (or IMAGEGEN_DOCS_BUILD_DIR), which must hold a build with its
 * search-index.json (the docs build writes it).
 */
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startDocsHost } from '@imagegen/docs/host';
import { modalQuery } from '@imagegen/docs/modal-query';
import { createSearchService, parseSearchRequest, recordsOfBuild, SEARCH_DEFAULTS } from '@imagegen/search';
import { chromium } from 'playwright-core';
import { percentile } from './percentile.ts';

const QUERIES = [
  'inpaint',
  'facelok',
  'controlnet sdxl',
  'face lock',
  'outpainting',
  'upscale',
  'superresolution',
  'schedulers',
  'hires fix',
  'nsfw check',
  'prompt guide',
  'flux schnell',
  'photomaker',
  'quick swap',
  'virtual try on',
  'relight',
  'remove background',
  'train models',
  'lora sdxl',
  'guidance_scale',
  'webhook signature',
  'queued_image_urls',
  'image to image',
  'api key',
];

/** What the modal sends for a keystroke on a docs page (contextual search's facet filters). */
const modalRequest = (query: string) =>
  modalQuery({
    indexName: SEARCH_DEFAULTS.indexName,
    query,
    snippetWords: 10,
    clickAnalytics: true,
    facetFilters: ['language:en', ['docusaurus_tag:default', 'docusaurus_tag:docs-default-current']],
  });

function prefixes(queries: string[]): string[] {
  return queries.flatMap((query) => Array.from({ length: query.length }, (_, i) => query.slice(0, i + 1)));
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export default async function main(): Promise<void> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const buildDir = process.env.IMAGEGEN_DOCS_BUILD_DIR ?? path.join(here, '../packages/docs/build');
  const records = await recordsOfBuild(buildDir);
  const service = createSearchService({ records, ...SEARCH_DEFAULTS });
  const keystrokes = prefixes(QUERIES).filter((q) => q.trim());
  // The service's own parsing of the modal's request, done once: the engine figures time the search.
  const params = keystrokes.map((query) => parseSearchRequest(modalRequest(query), 0).params);

  // Server side, in process: warm up, then every keystroke query 20 times over.
  for (const query of params) service.index.search(query);
  const engine: number[] = [];
  // CPU time too: on a shared machine the wall time includes waiting for a core.
  const cpu: number[] = [];
  for (let round = 0; round < 20; round++) {
    for (const query of params) {
      const cpuStart = process.cpuUsage();
      const started = performance.now();
      service.index.search(query);
      engine.push(performance.now() - started);
      const used = process.cpuUsage(cpuStart);
      cpu.push((used.user + used.system) / 1000);
    }
  }
  console.log(
    `engine: ${engine.length} queries over ${records.length} records, p50 ${percentile(engine, 50).toFixed(3)} ms, p99 ${percentile(engine, 99).toFixed(3)} ms`,
  );

  const docs = await startDocsHost({ port: 0, buildDir, handlers: [service.handle] });
  const credentials = new URLSearchParams({
    'x-algolia-application-id': SEARCH_DEFAULTS.appId,
    'x-algolia-api-key': SEARCH_DEFAULTS.apiKey,
  });
  const endpoint = `${docs.url}/1/indexes/*/queries?${credentials}`;
  const http: number[] = [];
  for (let round = 0; round < 5; round++) {
    for (const query of keystrokes) {
      const body = JSON.stringify({ requests: [modalRequest(query)] });
      const started = performance.now();
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body,
      });
      await response.arrayBuffer();
      if (round > 0) http.push(performance.now() - started);
    }
  }
  console.log(
    `http: ${http.length} requests, p50 ${percentile(http, 50).toFixed(3)} ms, p99 ${percentile(http, 99).toFixed(3)} ms`,
  );

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  const typed: number[] = [];
  const failures: string[] = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${docs.url}/Introduction/getting-started`);
    await page.waitForSelector('html[data-has-hydrated="true"]');
    await page.keyboard.press('Control+k');
    const input = page.locator('.DocSearch-Input');
    await input.waitFor();
    for (const [pass, query] of [...QUERIES, ...QUERIES].entries()) {
      await input.fill('');
      for (let i = 1; i <= query.length; i++) {
        const prefix = query.slice(0, i);
        if (!prefix.trim() || prefix.endsWith(' ')) {
          await page.keyboard.type(query[i - 1]!);
          continue;
        }
        // Time from the keydown to the DOM holding this prefix's results (hits or no-results).
        // Plain source, so the test runner's transpiler cannot add helpers the page lacks.
        await page.evaluate(`window.__keystroke = new Promise((resolve) => {
          const q = ${JSON.stringify(prefix)};
          let start = 0;
          addEventListener('keydown', () => { start = performance.now(); }, { once: true, capture: true });
          const done = () =>
            document.querySelector('.DocSearch-Dropdown-Results[data-query="' + CSS.escape(q) + '"]') ||
            (document.querySelector('.DocSearch-NoResults strong')?.textContent === q &&
              document.querySelector('.DocSearch-Container')?.getAttribute('data-status') === 'idle') ||
            document.querySelector('.DocSearch-Container')?.getAttribute('data-status') === 'error';
          const observer = new MutationObserver(() => {
            if (start && done()) {
              observer.disconnect();
              const failed = document.querySelector('.DocSearch-Container')?.getAttribute('data-status') === 'error';
              resolve(failed ? -1 : performance.now() - start);
            }
          });
          observer.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
        }); 0`);
        await page.keyboard.type(query[i - 1]!);
        let timer: NodeJS.Timeout | undefined;
        const ms = await Promise.race([
          page.evaluate('window.__keystroke') as Promise<number>,
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`no results shown for "${prefix}" within 10 s`)),
              10_000,
            );
          }),
        ]).finally(() => clearTimeout(timer));
        // The first pass warms the page's code paths up.
        if (ms < 0) failures.push(prefix);
        else if (pass >= QUERIES.length) typed.push(ms);
      }
    }
  } finally {
    await browser.close();
    await docs.close();
  }
  console.log(
    `browser: ${typed.length} keystrokes, p50 ${percentile(typed, 50).toFixed(1)} ms, p99 ${percentile(typed, 99).toFixed(1)} ms`,
  );

  console.log(
    JSON.stringify({
      records: records.length,
      server_queries: engine.length,
      server_p50_ms: round(percentile(engine, 50)),
      server_p99_ms: round(percentile(engine, 99)),
      server_max_ms: round(Math.max(...engine)),
      server_cpu_p50_ms: round(percentile(cpu, 50)),
      server_cpu_p99_ms: round(percentile(cpu, 99)),
      load_average_1m: round(loadavg()[0]!),
      cpus: cpus().length,
      http_p50_ms: round(percentile(http, 50)),
      http_p99_ms: round(percentile(http, 99)),
      keystrokes: typed.length,
      keystroke_failures: failures.length,
      keystroke_to_hits_p50_ms: round(percentile(typed, 50)),
      keystroke_to_hits_p99_ms: round(percentile(typed, 99)),
    }),
  );
}
