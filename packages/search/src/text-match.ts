/**
 * How a word of the text relates to the words of a query, with Algolia's rules: a word matches a
 * query word exactly, as a prefix (the last query word only, as the user is still typing it), or
 * with typos (1 from 4 letters, 2 from 8). Shared by ranking, highlighting and snippets so that
 * what ranks a hit is exactly what is highlighted in it.
 */

/** Letters and digits; '_' joins words as Algolia's separatorsToIndex '_' (DocSearch's setting). */
const WORD = /[\p{L}\p{N}]+(?:_+[\p{L}\p{N}]+)*/gu;

function tokenize(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []) as string[];
}

/**
 * The words a text is indexed under, each with its position: every word; the parts of a word
 * joined by '_' (so 'scale' finds id_scale); and, in headings, adjacent words joined (so
 * 'facelock' finds "Face lock", as Algolia joins and splits query words).
 */
export function indexedWords(text: string, joinPairs: boolean): [word: string, position: number][] {
  const words = tokenize(text);
  const out: [string, number][] = [];
  words.forEach((word, position) => {
    out.push([word, position]);
    if (word.includes('_')) for (const part of word.split(/_+/)) out.push([part, position]);
    if (joinPairs && position + 1 < words.length) out.push([word + words[position + 1]!, position]);
  });
  return out;
}

export interface Token {
  word: string;
  start: number;
  end: number;
}

export function tokensWithOffsets(text: string): Token[] {
  const tokens: Token[] = [];
  for (const match of text.matchAll(WORD)) {
    tokens.push({ word: match[0].toLowerCase(), start: match.index, end: match.index + match[0].length });
  }
  return tokens;
}

export function maxTypos(word: string): number {
  if (/^\d+$/.test(word)) return 0;
  if (word.length >= 8) return 2;
  if (word.length >= 4) return 1;
  return 0;
}

export interface WordMatch {
  /** Index of the query word it matches. */
  query: number;
  typos: number;
  /** The whole word, without typos (not a prefix). */
  exact: boolean;
}

/** What highlighting needs to know of a query: its words, and which words of a text match them. */
export interface WordMatcher {
  readonly words: string[];
  match(word: string): WordMatch | null;
  /** The match of a word, or of one of its '_' parts. */
  matchWord(word: string): WordMatch | null;
}

/** A word's own match, or else the best match among its '_' parts (snake_case names in code). */
function matchWholeOrParts(matcher: Pick<WordMatcher, 'match'>, word: string): WordMatch | null {
  const whole = matcher.match(word);
  if (whole || !word.includes('_')) return whole;
  let found: WordMatch | null = null;
  for (const part of word.split(/_+/)) {
    const match = matcher.match(part);
    if (match && (!found || better(match, found))) found = match;
  }
  return found;
}

/**
 * A matcher from the words the index already matched to the query (its expansions): a lookup,
 * where QueryMatcher computes edit distances. Words outside the index's vocabulary fall back to it.
 */
export class ExpansionMatcher implements WordMatcher {
  constructor(
    private readonly known: Map<string, WordMatch>,
    private readonly fallback: QueryMatcher,
  ) {}

  get words(): string[] {
    return this.fallback.words;
  }

  match(word: string): WordMatch | null {
    return this.known.get(word) ?? null;
  }

  matchWord(word: string): WordMatch | null {
    return matchWholeOrParts(this, word);
  }
}

/** Matches words of a text against one query; memoised, since a query meets the same words often. */
export class QueryMatcher implements WordMatcher {
  readonly words: string[];
  private readonly memo = new Map<string, WordMatch | null>();

  constructor(query: string) {
    this.words = tokenize(query);
  }

  /** The match of a word, or of one of its '_' parts. */
  matchWord(word: string): WordMatch | null {
    return matchWholeOrParts(this, word);
  }

  match(word: string): WordMatch | null {
    let found = this.memo.get(word);
    if (found !== undefined) return found;
    found = null;
    const last = this.words.length - 1;
    for (let i = 0; i < this.words.length; i++) {
      const q = this.words[i]!;
      let candidate: WordMatch | null = null;
      if (word === q || isPlural(word, q)) candidate = { query: i, typos: 0, exact: true };
      else if (i === last && word.startsWith(q)) candidate = { query: i, typos: 0, exact: false };
      else {
        const limit = maxTypos(q);
        if (limit > 0) {
          const distance = boundedDistance(q, word, limit);
          if (distance <= limit) candidate = { query: i, typos: distance, exact: false };
          else if (i === last && word.length > q.length) {
            // Typing a word with a typo in it: its prefix is within the limit.
            const prefixDistance = boundedDistance(q, word.slice(0, q.length), limit);
            if (prefixDistance <= limit) candidate = { query: i, typos: prefixDistance, exact: false };
          }
        }
      }
      if (candidate && (!found || better(candidate, found))) found = candidate;
    }
    this.memo.set(word, found);
    return found;
  }
}

/** Algolia's ignorePlurals, for English: 'controlnet' finds 'controlnets' and back. */
function isPlural(word: string, q: string): boolean {
  return word === `${q}s` || word === `${q}es` || q === `${word}s` || q === `${word}es`;
}

export function pluralForms(q: string): string[] {
  const forms = [`${q}s`, `${q}es`];
  if (q.endsWith('es')) forms.push(q.slice(0, -2));
  if (q.endsWith('s')) forms.push(q.slice(0, -1));
  return forms;
}

function better(a: WordMatch, b: WordMatch): boolean {
  if (a.typos !== b.typos) return a.typos < b.typos;
  return a.exact && !b.exact;
}

/** Levenshtein distance (as MiniSearch's fuzzy search counts it), or limit + 1 once it is exceeded. */
function boundedDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  const rows = a.length + 1;
  const cols = b.length + 1;
  let previous: number[] = Array.from({ length: cols }, (_, j) => j);
  for (let i = 1; i < rows; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > limit) return limit + 1;
    previous = current;
  }
  return previous[cols - 1]!;
}
