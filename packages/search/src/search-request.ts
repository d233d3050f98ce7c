/**
 * Reads one entry of Algolia's multi-query body (`{requests: [{indexName, query, …}]}`): the
 * parameters may sit on the entry itself (algoliasearch 5) or in `params`, as a URL-encoded
 * string (algoliasearch 4, InstantSearch) or an object. Bounds are ours: a query of at most 64
 * characters, at most 100 hits per page. Unknown parameters are ignored.
 */
import { AlgoliaError } from './algolia-error.ts';
import type { SearchParams } from './search-index.ts';

export const MAX_QUERY_LENGTH = 64;
const MAX_HITS_PER_PAGE = 100;
const MAX_PAGE = 1000;
export const MAX_REQUESTS = 50;
const MAX_TAG_LENGTH = 64;

export interface ParsedRequest {
  indexName: string;
  params: SearchParams;
  clickAnalytics: boolean;
  /** The parameters as Algolia echoes them in `params`. */
  echo: string;
}

const DEFAULT_HIGHLIGHT = ['*'];

export function parseSearchRequest(entry: unknown, position: number): ParsedRequest {
  const at = `requests[${position}]`;
  if (!isObject(entry)) throw new AlgoliaError(400, `${at} must be an object`);
  const { indexName } = entry;
  if (typeof indexName !== 'string' || indexName.length === 0) {
    throw new AlgoliaError(400, `${at}.indexName must be a non-empty string`);
  }
  const raw: Record<string, unknown> = { ...paramsOf(entry.params, at), ...entry };
  delete raw.params;
  delete raw.indexName;
  delete raw.type;

  const query = optional(raw.query, '', (v) => typeof v === 'string', `${at}.query must be a string`);
  if (query.length > MAX_QUERY_LENGTH) {
    throw new AlgoliaError(400, `${at}.query is too long: at most ${MAX_QUERY_LENGTH} characters`);
  }
  const hitsPerPage = integer(raw.hitsPerPage, 20, 0, MAX_HITS_PER_PAGE, `${at}.hitsPerPage`);
  const page = integer(raw.page, 0, 0, MAX_PAGE, `${at}.page`);
  const params: SearchParams = {
    query,
    page,
    hitsPerPage,
    attributesToRetrieve: stringList(raw.attributesToRetrieve, ['*'], `${at}.attributesToRetrieve`),
    attributesToHighlight: stringList(
      raw.attributesToHighlight,
      DEFAULT_HIGHLIGHT,
      `${at}.attributesToHighlight`,
    ),
    attributesToSnippet: stringList(raw.attributesToSnippet, [], `${at}.attributesToSnippet`),
    highlightPreTag: tag(raw.highlightPreTag, '<em>', `${at}.highlightPreTag`),
    highlightPostTag: tag(raw.highlightPostTag, '</em>', `${at}.highlightPostTag`),
    snippetEllipsisText: tag(raw.snippetEllipsisText, '…', `${at}.snippetEllipsisText`),
    facetFilters: facetFilters(raw.facetFilters, `${at}.facetFilters`),
    facets: stringList(raw.facets, [], `${at}.facets`),
    distinct: raw.distinct === undefined ? true : distinct(raw.distinct, `${at}.distinct`),
  };
  const clickAnalytics = optional(
    raw.clickAnalytics,
    false,
    (v) => typeof v === 'boolean',
    `${at}.clickAnalytics must be a boolean`,
  );
  const echo = new URLSearchParams(
    Object.entries(raw).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  ).toString();
  return { indexName, params, clickAnalytics, echo };
}

function paramsOf(params: unknown, at: string): Record<string, unknown> {
  if (params === undefined) return {};
  if (isObject(params)) return params;
  if (typeof params !== 'string') throw new AlgoliaError(400, `${at}.params must be a string or an object`);
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(params)) out[key] = decodeParam(value);
  return out;
}

/** URL-encoded parameters carry arrays as JSON and numbers and booleans as text. */
function decodeParam(value: string): unknown {
  if (/^[[{]/.test(value) || value === 'true' || value === 'false' || /^-?\d+$/.test(value)) {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

function optional<T>(value: unknown, fallback: T, valid: (v: unknown) => boolean, message: string): T {
  if (value === undefined) return fallback;
  if (!valid(value)) throw new AlgoliaError(400, message);
  return value as T;
}

function integer(value: unknown, fallback: number, min: number, max: number, name: string): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw new AlgoliaError(400, `${name} must be an integer from ${min} to ${max}`);
  }
  return n;
}

function stringList(value: unknown, fallback: string[], name: string): string[] {
  if (value === undefined) return fallback;
  if (typeof value === 'string') return value.split(',').filter(Boolean);
  if (
    !Array.isArray(value) ||
    value.length > 100 ||
    !value.every((v) => typeof v === 'string' && v.length <= 100)
  ) {
    throw new AlgoliaError(400, `${name} must be a list of attribute names`);
  }
  return value as string[];
}

function tag(value: unknown, fallback: string, name: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value.length > MAX_TAG_LENGTH) {
    throw new AlgoliaError(400, `${name} must be a string of at most ${MAX_TAG_LENGTH} characters`);
  }
  return value;
}

function facetFilters(value: unknown, name: string): string[][] {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length > 100)
    throw new AlgoliaError(400, `${name} must be a list of filters`);
  return list.map((item) => {
    const alternatives = typeof item === 'string' ? [item] : item;
    if (
      !Array.isArray(alternatives) ||
      !alternatives.every((f) => typeof f === 'string' && f.includes(':'))
    ) {
      throw new AlgoliaError(400, `${name} entries must be "attribute:value" strings or lists of them`);
    }
    return alternatives as string[];
  });
}

function distinct(value: unknown, name: string): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 0 || value === 1) return value === 1;
  throw new AlgoliaError(400, `${name} must be a boolean`);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
