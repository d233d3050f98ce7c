/** Search hits as the modal shows them: grouped by page, in ranking order, at most 5 per group. */
export const HITS_PER_PAGE = 20;
const HITS_PER_GROUP = 5;

export interface Highlighted {
  value: string;
}

export interface SearchHit {
  objectID: string;
  type: 'lvl1' | 'lvl2' | 'lvl3' | 'lvl4' | 'lvl5' | 'lvl6' | 'content';
  url: string;
  content?: string | null;
  hierarchy: Record<string, string | null>;
  _highlightResult?: { hierarchy?: Record<string, Highlighted>; content?: Highlighted };
  _snippetResult?: { hierarchy?: Record<string, Highlighted>; content?: Highlighted };
}

export interface HitGroup {
  /** The page (url without its anchor). */
  page: string;
  title: string;
  hits: SearchHit[];
}

function pageOf(url: string): string {
  const hash = url.indexOf('#');
  return hash < 0 ? url : url.slice(0, hash);
}

export function groupHits(hits: SearchHit[], perGroup = HITS_PER_GROUP): HitGroup[] {
  const groups = new Map<string, HitGroup>();
  for (const hit of hits) {
    const page = pageOf(hit.url);
    let group = groups.get(page);
    if (!group) {
      group = { page, title: hit.hierarchy.lvl1 ?? hit.hierarchy.lvl0 ?? page, hits: [] };
      groups.set(page, group);
    }
    if (group.hits.length < perGroup) group.hits.push(hit);
  }
  return [...groups.values()];
}

/**
 * The page hit a content hit belongs to: the group's page hit when the results hold it (DocSearch's
 * __docsearch_parent), otherwise the page hit built from the content hit's own hierarchy (pages are
 * identified by URL when stored, so both are the same stored search).
 */
export function parentOf(hit: SearchHit, group: HitGroup): SearchHit | null {
  if (hit.type !== 'content') return null;
  const found = group.hits.find((other) => other.type === 'lvl1');
  if (found) return found;
  if (!hit.hierarchy.lvl1) return null;
  return {
    objectID: `page:${pageOf(hit.url)}`,
    type: 'lvl1',
    url: pageOf(hit.url),
    content: null,
    hierarchy: {
      lvl0: hit.hierarchy.lvl0 ?? null,
      lvl1: hit.hierarchy.lvl1,
      lvl2: null,
      lvl3: null,
      lvl4: null,
      lvl5: null,
      lvl6: null,
    },
  };
}

const LEVEL_ORDER = ['lvl1', 'lvl2', 'lvl3', 'lvl4', 'lvl5', 'lvl6'] as const;

/** The title line of a hit (HTML from the service: escaped text plus highlight tags). */
export function titleHtml(hit: SearchHit): string {
  if (hit.type === 'content') {
    return (
      hit._snippetResult?.content?.value ??
      hit._highlightResult?.content?.value ??
      escapeText(hit.content ?? '')
    );
  }
  return (
    hit._snippetResult?.hierarchy?.[hit.type]?.value ??
    hit._highlightResult?.hierarchy?.[hit.type]?.value ??
    escapeText(hit.hierarchy[hit.type] ?? '')
  );
}

/** The path line: the headings above the hit. */
export function pathText(hit: SearchHit): string {
  const depth = hit.type === 'content' ? 7 : LEVEL_ORDER.indexOf(hit.type) + 1;
  const above = LEVEL_ORDER.slice(0, Math.max(0, depth - 1))
    .map((level) => hit.hierarchy[level])
    .filter((value): value is string => Boolean(value));
  return above.length > 0 ? above.join(' › ') : (hit.hierarchy.lvl0 ?? '');
}

function escapeText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
