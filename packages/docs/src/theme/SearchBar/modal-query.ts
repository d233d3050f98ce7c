import { HITS_PER_PAGE } from './group-hits.ts';

const LEVELS = ['lvl0', 'lvl1', 'lvl2', 'lvl3', 'lvl4', 'lvl5', 'lvl6'] as const;

export interface ModalQueryOptions {
  indexName: string;
  query: string;
  /** Words in each snippet: 10, or 5 on narrow screens (as DocSearch does). */
  snippetWords: number;
  clickAnalytics: boolean;
  facetFilters: (string | string[])[];
}

/**
 * The request the modal sends for each keystroke, in DocSearch's shape. One builder, so the
 * benchmark measures exactly what the site asks for.
 */
export function modalQuery(options: ModalQueryOptions) {
  const { indexName, query, snippetWords, clickAnalytics, facetFilters } = options;
  return {
    indexName,
    query,
    attributesToRetrieve: [...LEVELS.map((level) => `hierarchy.${level}`), 'content', 'type', 'url'],
    attributesToSnippet: [
      ...LEVELS.slice(1).map((level) => `hierarchy.${level}:${snippetWords}`),
      `content:${snippetWords}`,
    ],
    snippetEllipsisText: '…',
    highlightPreTag: '<mark>',
    highlightPostTag: '</mark>',
    hitsPerPage: HITS_PER_PAGE,
    clickAnalytics,
    facetFilters,
  };
}
