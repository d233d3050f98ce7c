/**
 * A DocSearch record, as the DocSearch crawler writes them (record version v3): one record per
 * heading and one per block of text, each carrying the hierarchy of headings above it.
 */
export const LEVELS = ['lvl0', 'lvl1', 'lvl2', 'lvl3', 'lvl4', 'lvl5', 'lvl6'] as const;
export type Level = (typeof LEVELS)[number];
export type RecordType = Exclude<Level, 'lvl0'> | 'content';

export type Hierarchy = Record<Level, string | null>;

export interface DocSearchRecord {
  objectID: string;
  type: RecordType;
  hierarchy: Hierarchy;
  content: string | null;
  /** Absolute, with the anchor of the nearest heading (the theme calls `new URL(hit.url)`). */
  url: string;
  url_without_anchor: string;
  anchor: string | null;
  /** Facets the theme's contextual search filters on. */
  language: string;
  version: string[];
  docusaurus_tag: string[];
  /** The crawler's custom ranking: level (lvl0 100 … lvl6 40, content 0), then page order. */
  weight: { pageRank: number; level: number; position: number };
}

export const LEVEL_WEIGHT: Record<RecordType | 'lvl0', number> = {
  lvl0: 100,
  lvl1: 90,
  lvl2: 80,
  lvl3: 70,
  lvl4: 60,
  lvl5: 50,
  lvl6: 40,
  content: 0,
};

/** The file the docs build writes next to the site and the service loads. */
export interface SearchIndexFile {
  version: 1;
  builtAt: string;
  siteUrl: string;
  records: DocSearchRecord[];
}
