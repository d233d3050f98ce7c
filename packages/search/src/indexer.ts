/**
 * Reads the built documentation site and writes DocSearch records, following the DocSearch
 * crawler's Docusaurus template: lvl0 is the active sidebar category (or navbar item, default
 * 'Documentation'); lvl1 `header h1, article h1`; lvl2–lvl4 `article h2`–`h4`; lvl5
 * `article h5, article td:first-child`; lvl6 `article h6`; content `article p, article li,
 * article td:last-child`. Facets come from the `docsearch:*` meta tags Docusaurus writes.
 *
 * build-index.ts runs it from the command line; the docs package does so after every build.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import * as cheerio from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import {
  type DocSearchRecord,
  type Hierarchy,
  LEVEL_WEIGHT,
  LEVELS,
  type RecordType,
  type SearchIndexFile,
} from './records.ts';

const SELECTORS: Record<RecordType, string> = {
  lvl1: 'header h1, article h1',
  lvl2: 'article h2',
  lvl3: 'article h3',
  lvl4: 'article h4',
  lvl5: 'article h5, article td:first-child',
  lvl6: 'article h6',
  content: 'article p, article li, article td:last-child',
};
const LVL0_SELECTOR =
  '.menu__link.menu__link--sublist.menu__link--active, .navbar__item.navbar__link--active';
/** Page chrome inside <article> that the crawler's selectors would otherwise pick up. */
const CHROME = 'nav, .theme-doc-toc-mobile, .theme-doc-footer, .pagination-nav, .hash-link, script, style';
const SKIPPED_PAGES = new Set(['404.html']);

export interface IndexOptions {
  /** The built site (packages/docs/build). */
  buildDir: string;
  /** The origin hits point at; defaults to each page's og:url origin, else http://localhost:3000. */
  siteUrl?: string;
}

export async function indexBuiltSite(options: IndexOptions): Promise<SearchIndexFile> {
  const pages = (await listHtmlFiles(options.buildDir)).sort();
  const records: DocSearchRecord[] = [];
  let siteUrl = options.siteUrl;
  for (const file of pages) {
    const html = await readFile(path.join(options.buildDir, file), 'utf8');
    const page = recordsOfPage(html, file, options.siteUrl);
    siteUrl ??= page.origin;
    records.push(...page.records);
  }
  return { version: 1, builtAt: new Date().toISOString(), siteUrl: siteUrl ?? '', records };
}

async function listHtmlFiles(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(path.join(dir, prefix), { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (entry.name !== 'assets') files.push(...(await listHtmlFiles(dir, relative)));
    } else if (entry.name.endsWith('.html') && !SKIPPED_PAGES.has(relative)) {
      files.push(relative);
    }
  }
  return files;
}

/** The records of one built page, in document order. */
export function recordsOfPage(
  html: string,
  file: string,
  siteUrl?: string,
): { origin: string; records: DocSearchRecord[] } {
  const $ = cheerio.load(html);
  const pageUrl = pageUrlOf($, file, siteUrl);
  if ($('article').length === 0) return { origin: pageUrl.origin, records: [] };

  const lvl0 = cleanText($(LVL0_SELECTOR).last().text()) || 'Documentation';
  const language = $('meta[name="docsearch:language"]').attr('content') ?? 'en';
  const version = metaList($, 'docsearch:version');
  const tags = metaList($, 'docsearch:docusaurus_tag');
  // The crawler's pageRank: listings (category indexes, guide lists) rank below the pages they list.
  const listing =
    $('[class*="generatedIndexPage"]').length > 0 ||
    /\bblog-(list|archive|tags-post-list)-page\b/.test($('html').attr('class') ?? '');
  const pageRank = listing ? -1 : 0;

  $(CHROME).remove();
  const typeOf = new Map<AnyNode, RecordType>();
  for (const type of Object.keys(SELECTORS) as RecordType[]) {
    $(SELECTORS[type]).each((_, element) => {
      // The first selector wins: a table's only cell is its first, so a heading (lvl5).
      if (!typeOf.has(element)) typeOf.set(element, type);
    });
  }

  const records: DocSearchRecord[] = [];
  const hierarchy: Hierarchy = {
    lvl0,
    lvl1: null,
    lvl2: null,
    lvl3: null,
    lvl4: null,
    lvl5: null,
    lvl6: null,
  };
  let anchor: string | null = null;
  let position = 0;
  const urlWithoutAnchor = pageUrl.href;

  const visit = (node: AnyNode) => {
    if (node.type !== 'tag') return;
    const element = node as Element;
    const type = typeOf.get(node);
    if (!type) {
      for (const child of element.children) visit(child);
      return;
    }
    const text = cleanText($(element).text());
    if (!text) return;
    if (type === 'content') {
      if (!hierarchy.lvl1) return;
      records.push(makeRecord('content', text));
      return;
    }
    const depth = Number(type.slice(3));
    hierarchy[type] = text;
    for (let deeper = depth + 1; deeper <= 6; deeper++) hierarchy[LEVELS[deeper]!] = null;
    const id = $(element).attr('id') ?? (type === 'lvl5' ? $(element).closest('tr').attr('id') : undefined);
    // The page heading carries no anchor; a sub-heading without id keeps its parent's.
    if (type === 'lvl1') anchor = null;
    else if (id) anchor = id;
    records.push(makeRecord(type, null));
  };

  const makeRecord = (type: RecordType, content: string | null): DocSearchRecord => {
    const url = anchor ? `${urlWithoutAnchor}#${encodeURIComponent(anchor)}` : urlWithoutAnchor;
    position += 1;
    const record: DocSearchRecord = {
      objectID: createHash('sha1').update(`${url}\u0000${position}`).digest('hex').slice(0, 20),
      type,
      hierarchy: { ...hierarchy },
      content,
      url,
      url_without_anchor: urlWithoutAnchor,
      anchor,
      language,
      version,
      docusaurus_tag: tags,
      weight: { pageRank, level: LEVEL_WEIGHT[type], position },
    };
    return record;
  };

  // Generated index pages put their title in a <header> outside the article ('header h1').
  const title = $(SELECTORS.lvl1).first();
  if (title.length > 0 && title.closest('article').length === 0) visit(title[0]!);
  // Cards are articles inside the article: walk the outermost ones only.
  $('article')
    .filter((_, article) => $(article).parents('article').length === 0)
    .each((_, article) => {
      visitWithRowScope(article, visit, hierarchy);
    });
  return { origin: pageUrl.origin, records };
}

/** Walks the article; after each table row, the row's lvl5 (its first cell) no longer applies. */
function visitWithRowScope(root: Element, visit: (node: AnyNode) => void, hierarchy: Hierarchy): void {
  for (const child of root.children) {
    if (child.type !== 'tag') continue;
    const element = child as Element;
    if (element.name === 'tr') {
      visit(element);
      hierarchy.lvl5 = null;
      hierarchy.lvl6 = null;
    } else if (element.name === 'table' || element.name === 'tbody' || element.name === 'thead') {
      visitWithRowScope(element, visit, hierarchy);
    } else if (hasTable(element)) {
      // Headings and text beside a nested table still come in document order.
      for (const grandchild of element.children) {
        if (grandchild.type === 'tag' && hasTable(grandchild as Element))
          visitWithRowScope(grandchild as Element, visit, hierarchy);
        else visit(grandchild);
      }
    } else {
      visit(element);
    }
  }
}

function hasTable(element: Element): boolean {
  if (element.name === 'table') return true;
  return element.children.some((child) => child.type === 'tag' && hasTable(child as Element));
}

function pageUrlOf($: cheerio.CheerioAPI, file: string, siteUrl: string | undefined): URL {
  const ogUrl = $('meta[property="og:url"]').attr('content');
  const route =
    file === 'index.html' ? '/' : `/${file.replace(/(\/)?index\.html$/, '').replace(/\.html$/, '')}`;
  const fallbackOrigin = siteUrl ?? 'http://localhost:3000';
  let url: URL;
  try {
    url = ogUrl ? new URL(ogUrl) : new URL(route, fallbackOrigin);
  } catch {
    url = new URL(route, fallbackOrigin);
  }
  if (siteUrl) url = new URL(url.pathname, siteUrl);
  url.hash = '';
  url.search = '';
  return url;
}

function metaList($: cheerio.CheerioAPI, name: string): string[] {
  const value = $(`meta[name="${name}"]`).attr('content');
  return value ? [value] : [];
}

function cleanText(text: string): string {
  // Docusaurus puts a zero-width space in every heading's anchor link.
  return (
    text
      .replace(/[\u200b\u00a0]/g, ' ')
      // Generated category pages put an emoji before each card title.
      .replace(/\p{Extended_Pictographic}/gu, '')
      .replace(/\ufe0f/g, '')
      .replace(/\s+/g, ' ')
      .trim()
  );
}
