/**
 * Request strings as PostgreSQL can store them. A JSON string may hold any UTF-16 code units, and
 * the API accepts any string the original service accepts, but PostgreSQL's `text` cannot hold
 * U+0000, `jsonb` refuses the `\u0000` escape, and a lone surrogate (`\ud800`) is not UTF-8 at all
 * (`jsonb` refuses its escape; a `text` parameter silently becomes U+FFFD). So the SQL operations
 * that write strings from outside (requests, engines, webhook receivers) pass them through
 * `toStored`, and those that read them back pass their rows through `fromStored`:
 *
 * - U+0000 is stored as ESC `0`, a lone surrogate as ESC `u` and its four hex digits, ESC itself
 *   as ESC ESC. ESC is U+FDD0, a noncharacter: Unicode reserves it for a program's internal use,
 *   so text never needs it, and when a client sends it anyway it is escaped like the others.
 * - Every other character is stored as itself. Strings without those three (all but a few) are
 *   stored unchanged, so rows stay readable, `=` lookups on an encoded key still match, and the
 *   encoding of a concatenation is the concatenation of the encodings: SQL that appends to a
 *   stored string (`tags || ',' || $1`) stays decodable.
 *
 * The encoding is one-to-one, and `fromStored(toStored(x))` is `x` for every string.
 */

const ESC = '\uFDD0';
/** What needs escaping: U+0000, ESC, and surrogates that are not half of a pair. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is what PostgreSQL cannot hold.
const UNSTORABLE = /\u0000|\uFDD0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ESCAPED = /\uFDD0(?:0|\uFDD0|u(d[89a-f][0-9a-f]{2}))/g;
/** Any unit UNSTORABLE may match: one character class, so the common string costs one quick scan. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is what PostgreSQL cannot hold.
const MAYBE_UNSTORABLE = /[\u0000\uFDD0\uD800-\uDFFF]/;

function encodeUnit(unit: string): string {
  if (unit === '\u0000') return `${ESC}0`;
  if (unit === ESC) return `${ESC}${ESC}`;
  return `${ESC}u${unit.charCodeAt(0).toString(16)}`;
}

function decodeEscape(escaped: string, surrogate: string | undefined): string {
  if (surrogate !== undefined) return String.fromCharCode(Number.parseInt(surrogate, 16));
  return escaped === `${ESC}0` ? '\u0000' : ESC;
}

/** One string as PostgreSQL can store it. */
function toStoredText(text: string): string {
  return MAYBE_UNSTORABLE.test(text) ? text.replace(UNSTORABLE, encodeUnit) : text;
}

/** A stored string as it was written. */
function fromStoredText(text: string): string {
  return text.includes(ESC) ? text.replace(ESCAPED, decodeEscape) : text;
}

/**
 * A value to write: every string in it (object keys included) encoded, through arrays and plain
 * objects; numbers, booleans, null, Dates and Buffers as they are. A value with nothing to encode
 * (nearly every one) comes back as it is, not copied: it is on every submission's path.
 */
export function toStored<T>(value: T): T {
  return mapStrings(value, toStoredText);
}

/**
 * What JSON.stringify writes for the units `toStored` encodes: U+0000 and a lone surrogate as
 * `\u` escapes (lowercase, as the language defines them), ESC as itself. A JSON text without
 * any of these came from a value `toStored` hands back unchanged; one with them (a literal
 * backslash-u typed by a client included) is merely encoded the long way.
 */
const MAYBE_UNSTORABLE_JSON = /\\u(?:0000|d[89a-f])|\uFDD0/;

/**
 * `JSON.stringify(toStored(value))`, the JSON text a `jsonb` parameter takes, without walking
 * the value when nothing in it needs encoding: one scan of the text instead of a visit of every
 * key and string (a submission's batch of rows is on every submission's path).
 */
export function toStoredJson(value: unknown): string {
  const json = JSON.stringify(value);
  return MAYBE_UNSTORABLE_JSON.test(json) ? JSON.stringify(toStored(value)) : json;
}

/** A value or row read back: every string in it decoded, as `toStored` encoded it (and, like it, not copied when nothing changes). */
export function fromStored<T>(value: T): T {
  return mapStrings(value, fromStoredText);
}

/** `value` with `map` applied to every string in it; `value` itself when no string changed. */
function mapStrings<T>(value: T, map: (text: string) => string): T {
  if (typeof value === 'string') return map(value) as T;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!Object.is(mapStrings(value[i], map), value[i]))
        return value.map((item) => mapStrings(item, map)) as T;
    }
    return value;
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    if (entries.every(([key, item]) => map(key) === key && Object.is(mapStrings(item, map), item)))
      return value;
    // fromEntries defines own properties, so even a `__proto__` key stays a key.
    return Object.fromEntries(entries.map(([key, item]) => [map(key), mapStrings(item, map)])) as T;
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
