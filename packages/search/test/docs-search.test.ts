import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type DocsSearch, startDocsSearch } from '../src/docs-search.ts';
import { recordsOfPage } from '../src/indexer.ts';
import type { SearchIndexFile } from '../src/records.ts';
import { SEARCH_DEFAULTS } from '../src/search-settings.ts';

const page = (title: string, text: string) =>
  `<html><head><meta property="og:url" content="http://localhost:3000/${title}"></head><body><article><header><h1>${title}</h1></header><p>${text}</p></article></body></html>`;

function indexFile(title: string, text: string): string {
  const file: SearchIndexFile = {
    version: 1,
    builtAt: new Date().toISOString(),
    siteUrl: 'http://localhost:3000',
    records: recordsOfPage(page(title, text), `${title}/index.html`).records,
  };
  return JSON.stringify(file);
}

const hitsFor = (search: DocsSearch, query: string) =>
  search.service.index
    .search({
      query,
      page: 0,
      hitsPerPage: 5,
      attributesToRetrieve: ['url'],
      attributesToHighlight: [],
      attributesToSnippet: [],
      highlightPreTag: '<em>',
      highlightPostTag: '</em>',
      snippetEllipsisText: '…',
      facetFilters: [],
      facets: [],
      distinct: true,
    })
    .hits.map((hit) => new URL(hit.url as string).pathname);

describe('docs search on the docs host', () => {
  let dir: string;
  let search: DocsSearch | undefined;
  afterEach(async () => {
    search?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the records of the build and takes a rebuilt index without a restart', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'docs-search-'));
    await writeFile(
      path.join(dir, 'search-index.json'),
      indexFile('Relight', 'Change the light of a photo.'),
    );
    search = await startDocsSearch({ buildDir: dir, settings: SEARCH_DEFAULTS });
    expect(hitsFor(search, 'relight')).toEqual(['/Relight']);
    expect(hitsFor(search, 'outpainting')).toEqual([]);

    await new Promise((resolve) => setTimeout(resolve, 1100));
    await writeFile(path.join(dir, 'search-index.json'), indexFile('Outpainting', 'Extend an image.'));
    await expect
      .poll(() => hitsFor(search!, 'outpainting'), { timeout: 8000, interval: 250 })
      .toEqual(['/Outpainting']);
    expect(hitsFor(search, 'relight')).toEqual([]);
  });

  it('indexes the built pages itself when the build has no index file', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'docs-search-'));
    await writeFile(path.join(dir, 'index.html'), page('Upscale', 'Make an image larger.'));
    const lines: string[] = [];
    search = await startDocsSearch({
      buildDir: dir,
      settings: SEARCH_DEFAULTS,
      log: (line) => lines.push(line),
    });
    expect(hitsFor(search, 'upscale')).toEqual(['/Upscale']);
    expect(lines.join('\n')).toMatch(/missing/);
  });
});
