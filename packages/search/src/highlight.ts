/**
 * Algolia's `_highlightResult` and `_snippetResult` entries. Values are HTML-escaped text with only
 * the highlight tags as markup, since the modal renders them as HTML.
 */
import { type Token, tokensWithOffsets, type WordMatcher } from './text-match.ts';

export interface HighlightEntry {
  value: string;
  matchLevel: 'none' | 'partial' | 'full';
  matchedWords: string[];
  fullyHighlighted?: boolean;
}

export interface Tags {
  pre: string;
  post: string;
}

/** Which tokens of the text match, and the query words they matched. */
function markTokens(
  tokens: Token[],
  matcher: WordMatcher,
  pairs: boolean,
): { marked: boolean[]; words: Set<number> } {
  const marked = tokens.map(() => false);
  const words = new Set<number>();
  for (let i = 0; i < tokens.length; i++) {
    const match = matcher.matchWord(tokens[i]!.word);
    if (match) {
      marked[i] = true;
      words.add(match.query);
    } else if (pairs && i + 1 < tokens.length) {
      // "Face lock" answers "facelock": the index holds heading words joined in pairs too.
      const pair = matcher.match(tokens[i]!.word + tokens[i + 1]!.word);
      if (pair) {
        marked[i] = true;
        marked[i + 1] = true;
        words.add(pair.query);
      }
    }
  }
  return { marked, words };
}

function render(
  text: string,
  tokens: Token[],
  marked: boolean[],
  from: number,
  to: number,
  tags: Tags,
): string {
  if (tokens.length === 0) return escapeHtml(text);
  const startOffset = from === 0 ? 0 : tokens[from]!.start;
  const endOffset = to === tokens.length - 1 ? text.length : tokens[to]!.end;
  let out = '';
  let cursor = startOffset;
  for (let i = from; i <= to; i++) {
    const token = tokens[i]!;
    if (!marked[i]) continue;
    // Adjacent marked tokens joined by a separator are one highlighted span ("Face lock").
    let last = i;
    while (
      last + 1 <= to &&
      marked[last + 1] &&
      /^\s*$/.test(text.slice(tokens[last]!.end, tokens[last + 1]!.start))
    )
      last++;
    out += escapeHtml(text.slice(cursor, token.start));
    out += tags.pre + escapeHtml(text.slice(token.start, tokens[last]!.end)) + tags.post;
    cursor = tokens[last]!.end;
    i = last;
  }
  out += escapeHtml(text.slice(cursor, endOffset));
  return out;
}

function level(words: Set<number>, matcher: WordMatcher): HighlightEntry['matchLevel'] {
  if (words.size === 0) return 'none';
  return words.size >= matcher.words.length ? 'full' : 'partial';
}

export function highlight(text: string, matcher: WordMatcher, tags: Tags, pairs: boolean): HighlightEntry {
  const tokens = tokensWithOffsets(text);
  const { marked, words } = markTokens(tokens, matcher, pairs);
  return {
    value: render(text, tokens, marked, 0, tokens.length - 1, tags),
    matchLevel: level(words, matcher),
    matchedWords: [...words].map((i) => matcher.words[i]!),
    fullyHighlighted: tokens.length > 0 && marked.every(Boolean),
  };
}

/** A window of `length` words around the first match, with the ellipsis where text was cut. */
export function snippet(
  text: string,
  matcher: WordMatcher,
  tags: Tags,
  length: number,
  ellipsis: string,
  pairs: boolean,
): Omit<HighlightEntry, 'matchedWords' | 'fullyHighlighted'> {
  const tokens = tokensWithOffsets(text);
  const { marked, words } = markTokens(tokens, matcher, pairs);
  if (tokens.length <= length) {
    return {
      value: render(text, tokens, marked, 0, tokens.length - 1, tags),
      matchLevel: level(words, matcher),
    };
  }
  const first = Math.max(0, marked.indexOf(true));
  const from = Math.max(0, Math.min(first - Math.floor((length - 1) / 2), tokens.length - length));
  const to = from + length - 1;
  let value = render(text, tokens, marked, from, to, tags);
  if (from > 0) value = ellipsis + value;
  if (to < tokens.length - 1) value = value.replace(/[\s,;:.]+$/, '') + ellipsis;
  return { value, matchLevel: level(words, matcher) };
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": '#39' }[c]};`,
  );
}
