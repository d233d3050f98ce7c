import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { indexBuiltSite } from './indexer.ts';
import type { DocSearchRecord, SearchIndexFile } from './records.ts';

/** Reads the index file the docs build writes (packages/docs/build/search-index.json). */
export async function loadSearchIndexFile(file: string): Promise<SearchIndexFile> {
  const parsed = JSON.parse(await readFile(file, 'utf8')) as SearchIndexFile;
  if (parsed.version !== 1 || !Array.isArray(parsed.records)) {
    throw new Error(`${file} is not a search index (version 1) written by the search indexer`);
  }
  return parsed;
}

/** Where a build keeps its index file. */
export function searchIndexFileOf(buildDir: string): string {
  return path.join(buildDir, 'search-index.json');
}

/**
 * The records of a built site: its index file, or, for a build from before the indexer ran, the
 * site indexed now (a second or two).
 */
export async function recordsOfBuild(
  buildDir: string,
  log: (line: string) => void = () => {},
): Promise<DocSearchRecord[]> {
  const file = searchIndexFileOf(buildDir);
  if (existsSync(file)) return (await loadSearchIndexFile(file)).records;
  log(`${file} is missing: indexing the built site in memory`);
  return (await indexBuiltSite({ buildDir })).records;
}
