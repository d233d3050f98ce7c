/**
 * The query engine over DocSearch records, built on MiniSearch's radix tree (SearchableMap): the
 * vocabulary answers exact words, plurals, typos (1 from 4 letters, 2 from 8) and the prefix of
 * the word being typed; postings lists give each word's records, attributes and positions.
 * Ranking is Algolia's tie-breaking over the DocSearch index settings: matched words, typos,
 * attribute (the most query words one field holds, then that field's rank, lvl0 … lvl6, content),
 * then the crawler's custom ranking by hierarchy level, then proximity of the query words, exact
 * words and position on the page. Every word is
 * required; when that finds nothing, any word will do (removeWordsIfNoResults: allOptional).
 * Results are distinct on `url`, as DocSearch's `attributeForDistinct`: one hit per section.
 */
import SearchableMap from 'minisearch/SearchableMap';
import { type HighlightEntry, highlight, snippet, type Tags } from './highlight.ts';
import { type DocSearchRecord, LEVELS } from './records.ts';
import {
  ExpansionMatcher,
  indexedWords,
  maxTypos,
  pluralForms,
  QueryMatcher,
  type WordMatch,
  type WordMatcher,
} from './text-match.ts';

const FIELDS = [...LEVELS, 'content'] as const;
type Field = (typeof FIELDS)[number];
const CONTENT = FIELDS.length - 1;
/** Algolia's proximity counts a distance of at most 7, and 8 between attributes. */
const FAR = 8;
/** Words of a query beyond this are ignored (the query itself is at most 64 characters). */
const MAX_WORDS = 10;
const NO_MATCH = 127;

export interface SearchParams {
  query: string;
  page: number;
  hitsPerPage: number;
  attributesToRetrieve: string[];
  attributesToHighlight: string[];
  attributesToSnippet: string[];
  highlightPreTag: string;
  highlightPostTag: string;
  snippetEllipsisText: string;
  /** AND of ORs; a value may be negated with a leading '-'. */
  facetFilters: string[][];
  facets: string[];
  distinct: boolean;
}

export interface SearchResult {
  hits: Record<string, unknown>[];
  nbHits: number;
  page: number;
  nbPages: number;
  hitsPerPage: number;
  facets?: Record<string, Record<string, number>>;
}

interface Expansion {
  word: number;
  query: number;
  typos: number;
  exact: boolean;
}

export class SearchIndex {
  readonly records: readonly DocSearchRecord[];
  /** Per record and field (lvl0 … lvl6, content): [word id, position] pairs in position order. */
  private readonly fieldWords: Int32Array[][];
  private readonly vocabulary = new SearchableMap<number>();
  /** Per word id: [record, field, position] triples. */
  private readonly postings: Int32Array[] = [];
  private readonly urlIds: Int32Array;
  private readonly urlCount: number;
  private readonly order: Int32Array;
  // Scratch space for one query (queries run one at a time on the event loop).
  private readonly mask: Int32Array;
  private readonly exactMask: Int32Array;
  private readonly attribute: Int8Array;
  private readonly typos: Int8Array;
  private readonly queryOfWord: Int8Array;
  private readonly wordsById: string[] = [];
  private readonly last = new Int32Array(MAX_WORDS);
  private readonly distance = new Int32Array(MAX_WORDS);
  /** Which records pass a set of facet filters (the site sends the same few sets every time). */
  private readonly filterCache = new Map<string, Uint8Array>();

  constructor(records: DocSearchRecord[]) {
    this.records = records;
    const lists: number[][] = [];
    const idOf = (word: string): number => {
      let id = this.vocabulary.get(word);
      if (id === undefined) {
        id = lists.length;
        this.vocabulary.set(word, id);
        this.wordsById.push(word);
        lists.push([]);
      }
      return id;
    };
    this.fieldWords = records.map((record, r) =>
      FIELDS.map((field, f) => {
        const entries = indexedWords(fieldText(record, field), f !== CONTENT);
        const flat = new Int32Array(entries.length * 2);
        entries.forEach(([word, position], i) => {
          const id = idOf(word);
          lists[id]!.push(r, f, position);
          flat[i * 2] = id;
          flat[i * 2 + 1] = position;
        });
        return flat;
      }),
    );
    for (const list of lists) this.postings.push(Int32Array.from(list));
    this.queryOfWord = new Int8Array(lists.length).fill(-1);

    const urls = new Map<string, number>();
    this.urlIds = Int32Array.from(records, (record) => {
      let id = urls.get(record.url);
      if (id === undefined) {
        id = urls.size;
        urls.set(record.url, id);
      }
      return id;
    });
    this.urlCount = urls.size;
    // The order of an empty query: the custom ranking alone.
    this.order = Int32Array.from(records.keys()).sort((a, b) => compareCustom(records[a]!, records[b]!));
    this.mask = new Int32Array(records.length);
    this.exactMask = new Int32Array(records.length);
    this.attribute = new Int8Array(records.length);
    this.typos = new Int8Array(records.length * MAX_WORDS);
  }

  search(params: SearchParams): SearchResult {
    const queryMatcher = new QueryMatcher(params.query);
    const n = Math.min(queryMatcher.words.length, MAX_WORDS);
    const expansions = n > 0 ? this.expand(queryMatcher.words.slice(0, n)) : [];
    // Highlighting marks exactly the words ranking matched: a lookup per word of the text.
    const known = new Map<string, WordMatch>();
    for (const e of expansions) {
      known.set(this.wordsById[e.word]!, { query: e.query, typos: e.typos, exact: e.exact });
    }
    const matcher: WordMatcher = new ExpansionMatcher(known, queryMatcher);
    const allowed = this.allowed(params.facetFilters);
    const start = params.page * params.hitsPerPage;
    const need = start + params.hitsPerPage;
    let matched: Int32Array;
    let ordered: Int32Array;
    if (n === 0) {
      matched = this.order.filter((r) => allowed[r] === 1);
      ordered = params.distinct ? this.distinctPrefix(matched, matched.length) : matched;
    } else {
      const { candidates, scores } = this.rank(n, expansions, allowed);
      matched = candidates;
      ordered = this.firstInOrder(candidates, scores, need, params.distinct);
    }
    const nbHits = params.distinct ? this.countDistinct(matched) : matched.length;
    const all = ordered;
    const tags: Tags = { pre: params.highlightPreTag, post: params.highlightPostTag };
    // Hits share their page's headings: each distinct text is highlighted once per query.
    const memo = new Map<string, unknown>();
    const hits = Array.from(all.subarray(start, start + params.hitsPerPage), (r) =>
      renderHit(this.records[r]!, matcher, params, tags, memo),
    );
    const result: SearchResult = {
      hits,
      nbHits,
      page: params.page,
      nbPages: params.hitsPerPage > 0 ? Math.ceil(nbHits / params.hitsPerPage) : 0,
      hitsPerPage: params.hitsPerPage,
    };
    if (params.facets.length > 0) {
      result.facets = countFacets(
        Array.from(matched, (r) => this.records[r]!),
        params.facets,
      );
    }
    return result;
  }

  private expand(words: string[]): Expansion[] {
    const expansions: Expansion[] = [];
    words.forEach((q, query) => {
      const best = new Map<number, Expansion>();
      const offer = (word: number | undefined, typos: number, exact: boolean) => {
        if (word === undefined) return;
        const known = best.get(word);
        if (!known || typos < known.typos || (typos === known.typos && exact && !known.exact)) {
          best.set(word, { word, query, typos, exact });
        }
      };
      offer(this.vocabulary.get(q), 0, true);
      for (const form of pluralForms(q)) offer(this.vocabulary.get(form), 0, true);
      const limit = maxTypos(q);
      if (limit > 0) {
        for (const [, [word, distance]] of this.vocabulary.fuzzyGet(q, limit)) offer(word, distance, false);
      }
      if (query === words.length - 1) {
        this.vocabulary.atPrefix(q).forEach((_, word) => {
          offer(word, 0, false);
        });
      }
      expansions.push(...best.values());
    });
    return expansions;
  }

  /**
   * The candidates in ranking order, as far as the page needs (`need` hits, distinct on url when
   * asked). A broad prefix ('s') matches most records; sorting them all costs more than the rest
   * of the query, so the best ones are selected first and only those are sorted.
   */
  private firstInOrder(
    candidates: Int32Array,
    scores: Float64Array,
    need: number,
    distinct: boolean,
  ): Int32Array {
    const sortAll = () => {
      const order = Int32Array.from(candidates.keys()).sort((a, b) => scores[a]! - scores[b]!);
      const sorted = order.map((i) => candidates[i]!);
      return distinct ? this.distinctPrefix(sorted, sorted.length) : sorted;
    };
    for (let take = Math.max(64, need * 4); take < candidates.length; take *= 4) {
      const threshold = kthSmallest(scores, take);
      const picked: number[] = [];
      for (let i = 0; i < candidates.length; i++) if (scores[i]! <= threshold) picked.push(i);
      picked.sort((a, b) => scores[a]! - scores[b]!);
      const sorted = Int32Array.from(picked, (i) => candidates[i]!);
      const result = distinct ? this.distinctPrefix(sorted, need) : sorted;
      if (result.length >= need) return result.subarray(0, need);
    }
    return sortAll();
  }

  /** The first `need` records of an ordered list whose url was not seen before. */
  private distinctPrefix(ordered: Int32Array, need: number): Int32Array {
    const seen = new Uint8Array(this.urlCount);
    const kept: number[] = [];
    for (const r of ordered) {
      const url = this.urlIds[r]!;
      if (seen[url]) continue;
      seen[url] = 1;
      kept.push(r);
      if (kept.length >= need) break;
    }
    return Int32Array.from(kept);
  }

  private countDistinct(records: Int32Array): number {
    const seen = new Uint8Array(this.urlCount);
    let count = 0;
    for (const r of records) {
      const url = this.urlIds[r]!;
      if (!seen[url]) {
        seen[url] = 1;
        count++;
      }
    }
    return count;
  }

  private allowed(filters: string[][]): Uint8Array {
    const key = JSON.stringify(filters);
    let allowed = this.filterCache.get(key);
    if (!allowed) {
      allowed = Uint8Array.from(this.records, (record) => (matchesFilters(record, filters) ? 1 : 0));
      if (this.filterCache.size >= 64) this.filterCache.delete(this.filterCache.keys().next().value!);
      this.filterCache.set(key, allowed);
    }
    return allowed;
  }

  private rank(
    n: number,
    expansions: Expansion[],
    allowed: Uint8Array,
  ): { candidates: Int32Array; scores: Float64Array } {
    const full = (1 << n) - 1;
    const { mask, exactMask, attribute, typos } = this;
    const touched: number[] = [];
    for (const expansion of expansions) {
      const postings = this.postings[expansion.word]!;
      const bit = 1 << expansion.query;
      for (let i = 0; i < postings.length; i += 3) {
        const r = postings[i]!;
        const f = postings[i + 1]!;
        if (mask[r] === 0) {
          touched.push(r);
          attribute[r] = NO_MATCH;
          typos.fill(NO_MATCH, r * MAX_WORDS, r * MAX_WORDS + n);
        }
        mask[r]! |= bit;
        if (expansion.exact) exactMask[r]! |= bit;
        if (f < attribute[r]!) attribute[r] = f;
        const t = r * MAX_WORDS + expansion.query;
        if (expansion.typos < typos[t]!) typos[t] = expansion.typos;
      }
    }

    let required = full;
    if (n > 1 && !touched.some((r) => mask[r] === full)) required = 0;
    // Which query word each vocabulary word stands for (-1: none), as an array for the hot loop.
    const wordOf = n > 1 ? this.queryOfWord : null;
    if (wordOf) for (const e of expansions) wordOf[e.word] = e.query;
    const candidates: number[] = [];
    const scores: number[] = [];
    for (const r of touched) {
      const m = mask[r]!;
      if ((required === 0 ? m !== 0 : m === required) && allowed[r] === 1) {
        let wordCount = 0;
        let typoSum = 0;
        for (let q = 0; q < n; q++) {
          if (!(m & (1 << q))) continue;
          wordCount++;
          typoSum += typos[r * MAX_WORDS + q]!;
        }
        const fit = wordOf
          ? this.fieldFit(r, n, wordOf)
          : { together: 1, attribute: attribute[r]!, proximity: 0 };
        const record = this.records[r]!;
        // One number, compared digit group by digit group; each group's range is below its base
        // and the whole stays below 2^53 for up to MAX_WORDS words.
        let score = -wordCount;
        score = score * 16 + Math.min(typoSum, 15);
        score = score * 16 - fit.together;
        score = score * 16 + fit.attribute;
        score = score * 128 - record.weight.pageRank;
        score = score * 128 - record.weight.level;
        score = score * 128 + Math.min(fit.proximity, 127);
        score = score * 16 - popcount(exactMask[r]!);
        score = score * 4096 + Math.min(record.weight.position, 4095);
        candidates.push(r);
        scores.push(score);
      }
    }
    for (const r of touched) {
      mask[r] = 0;
      exactMask[r] = 0;
    }
    if (wordOf) for (const e of expansions) wordOf[e.word] = -1;
    return { candidates: Int32Array.from(candidates), scores: Float64Array.from(scores) };
  }

  /**
   * How well one field holds the query: the most query words any one field has (fields are
   * lvl0 … content), the first field holding that many, and the smallest sum of distances
   * between consecutive query words within a field (8 for each pair a field lacks).
   */
  private fieldFit(r: number, n: number, wordOf: Int8Array): FieldFit {
    const fit: FieldFit = { together: 0, attribute: FIELDS.length, proximity: FAR * (n - 1) };
    const { last, distance } = this;
    const fields = this.fieldWords[r]!;
    for (let f = 0; f < fields.length; f++) {
      const entries = fields[f]!;
      if (entries.length === 0) continue;
      last.fill(-1);
      distance.fill(FAR);
      let seen = 0;
      for (let i = 0; i < entries.length; i += 2) {
        const q = wordOf[entries[i]!]!;
        if (q < 0) continue;
        const p = entries[i + 1]!;
        if (last[q] === -1) seen++;
        last[q] = p;
        if (q > 0 && last[q - 1]! >= 0) distance[q] = Math.min(distance[q]!, Math.max(1, p - last[q - 1]!));
        if (q + 1 < n && last[q + 1]! >= 0)
          distance[q + 1] = Math.min(distance[q + 1]!, Math.max(1, p - last[q + 1]!));
      }
      if (seen > fit.together) {
        fit.together = seen;
        fit.attribute = f;
      }
      let total = 0;
      for (let q = 1; q < n; q++) total += distance[q]!;
      if (total < fit.proximity) fit.proximity = total;
    }
    return fit;
  }
}

interface FieldFit {
  together: number;
  attribute: number;
  proximity: number;
}

/** The k-th smallest value (1-based) of the array, by quickselect on a copy. */
function kthSmallest(values: Float64Array, k: number): number {
  const a = Float64Array.from(values);
  let lo = 0;
  let hi = a.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return a[target]!;
}

function popcount(value: number): number {
  let count = 0;
  for (let v = value; v; v &= v - 1) count++;
  return count;
}

function compareCustom(a: DocSearchRecord, b: DocSearchRecord): number {
  return (
    b.weight.pageRank - a.weight.pageRank ||
    b.weight.level - a.weight.level ||
    a.weight.position - b.weight.position
  );
}

function fieldText(record: DocSearchRecord, field: Field): string {
  return (field === 'content' ? record.content : record.hierarchy[field]) ?? '';
}

function facetValues(record: DocSearchRecord, attribute: string): string[] {
  const value = (record as unknown as Record<string, unknown>)[attribute];
  if (Array.isArray(value)) return value.map(String);
  if (value === null || value === undefined) return [];
  return [String(value)];
}

function matchesFilters(record: DocSearchRecord, filters: string[][]): boolean {
  return filters.every((alternatives) =>
    alternatives.some((filter) => {
      const colon = filter.indexOf(':');
      if (colon < 0) return false;
      const attribute = filter.slice(0, colon);
      let value = filter.slice(colon + 1);
      const negated = value.startsWith('-');
      if (negated) value = value.slice(1);
      else if (value.startsWith('\\-')) value = value.slice(1);
      const has = facetValues(record, attribute).includes(value);
      return negated ? !has : has;
    }),
  );
}

function countFacets(
  candidates: DocSearchRecord[],
  facets: string[],
): Record<string, Record<string, number>> {
  const names = facets.includes('*') ? ['language', 'version', 'docusaurus_tag', 'type'] : facets;
  const counts: Record<string, Record<string, number>> = {};
  for (const name of names) {
    const values: Record<string, number> = {};
    for (const record of candidates) {
      for (const value of facetValues(record, name)) values[value] = (values[value] ?? 0) + 1;
    }
    counts[name] = values;
  }
  return counts;
}

const SEARCHABLE = [...LEVELS.map((l) => `hierarchy.${l}`), 'content'];

function expand(attributes: string[]): string[] {
  const out: string[] = [];
  for (const attribute of attributes) {
    if (attribute === '*') out.push(...SEARCHABLE);
    else if (attribute === 'hierarchy') out.push(...SEARCHABLE.slice(0, LEVELS.length));
    else out.push(attribute);
  }
  return out;
}

function valueAt(record: DocSearchRecord, path: string): unknown {
  let value: unknown = record;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function setAt(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    node[part] ??= {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1)!] = value;
}

function renderHit(
  record: DocSearchRecord,
  matcher: WordMatcher,
  params: SearchParams,
  tags: Tags,
  memo: Map<string, unknown>,
): Record<string, unknown> {
  const once = <T>(key: string, make: () => T): T => {
    let value = memo.get(key) as T | undefined;
    if (value === undefined) {
      value = make();
      memo.set(key, value);
    }
    return value;
  };
  const hit: Record<string, unknown> = {};
  const retrieve = params.attributesToRetrieve;
  if (retrieve.includes('*')) {
    Object.assign(hit, structuredClone(record));
  } else {
    for (const path of retrieve) {
      const value = valueAt(record, path);
      if (value !== undefined) setAt(hit, path, value);
    }
  }
  hit.objectID = record.objectID;

  const highlightResult: Record<string, unknown> = {};
  for (const path of expand(params.attributesToHighlight)) {
    const value = valueAt(record, path);
    if (typeof value !== 'string') continue;
    const pairs = path !== 'content';
    const entry = once<HighlightEntry>(`h${pairs ? 1 : 0}\u0000${value}`, () =>
      highlight(value, matcher, tags, pairs),
    );
    setAt(highlightResult, path, entry);
  }
  hit._highlightResult = highlightResult;

  const snippetResult: Record<string, unknown> = {};
  for (const spec of params.attributesToSnippet) {
    const [attribute, words] = spec.split(':');
    const length = Math.max(1, Math.min(Number(words) || 10, 100));
    for (const path of expand([attribute!])) {
      const value = valueAt(record, path);
      if (typeof value !== 'string') continue;
      const pairs = path !== 'content';
      setAt(
        snippetResult,
        path,
        once(`s${length}:${pairs ? 1 : 0}\u0000${value}`, () =>
          snippet(value, matcher, tags, length, params.snippetEllipsisText, pairs),
        ),
      );
    }
  }
  if (params.attributesToSnippet.length > 0) hit._snippetResult = snippetResult;
  return hit;
}
