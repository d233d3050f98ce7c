/**
 * Writes the search index of a built docs site. The docs package runs it after every build
 * (`postbuild`), through the package name, writing build/search-index.json:
 *
 *   tsx -e "import '@imagegen/search/build-index'" -- --build build [--out FILE] [--site-url URL]
 *   tsx packages/search/src/build-index.ts --build packages/docs/build      (the same, by path)
 *
 * It runs when imported, so that the package name is enough to run it.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { indexBuiltSite } from './indexer.ts';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      build: { type: 'string' },
      out: { type: 'string' },
      'site-url': { type: 'string' },
    },
  });
  const buildDir = path.resolve(values.build ?? 'packages/docs/build');
  const out = path.resolve(values.out ?? path.join(buildDir, 'search-index.json'));
  const siteUrl = values['site-url'] ?? process.env.IMAGEGEN_DOCS_SITE_URL;
  const index = await indexBuiltSite({ buildDir, ...(siteUrl ? { siteUrl } : {}) });
  await writeFile(out, JSON.stringify(index));
  const pages = new Set(index.records.map((r) => r.url_without_anchor)).size;
  console.log(`search index: ${index.records.length} records from ${pages} pages -> ${out}`);
}

main().catch((error) => {
  console.error(`search indexer failed: ${(error as Error).stack ?? error}`);
  process.exit(1);
});
