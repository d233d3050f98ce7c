import type { ValidationErrorEntry, ValidationResult } from './endpoint.ts';
import { forgetNumberLiteral, recordLiteralText } from './number-literals.ts';

/**
 * JSON bodies read the way the original service reads them: FastAPI calls Python's `json.loads`,
 * so this is CPython's json scanner (its C accelerator, Python 3.11), not JSON.parse:
 *
 * - `NaN`, `Infinity` and `-Infinity` are numbers; `1e400` is infinity; `-0` is the int 0.
 * - a literal with a fraction or an exponent is a float, any other an int of any size; the parser
 *   records both kinds where pydantic can tell them apart (number-literals.ts).
 * - lone surrogates (`"\ud800"`) are strings like any other; the last of duplicate keys wins.
 * - a refusal is a JSONDecodeError: Python's words, at Python's position (counted in code points),
 *   answered as 422 `value_error.jsondecode`.
 * - what Python raises besides (an int literal over 4300 digits, nesting deeper than its recursion
 *   limit allows) is an {@link UnreadableBody}: FastAPI answers those 400.
 */

/** A body Python fails to read with an error other than JSONDecodeError: FastAPI answers 400. */
export class UnreadableBody extends Error {}

/**
 * The deepest nesting of arrays and objects the reference service reads: deeper, CPython's scanner
 * runs out of recursion (RecursionError) and FastAPI answers 400. Measured on FastAPI 0.92 under
 * Python 3.11 (recursion limit 1000, less the frames of the request that calls json.loads).
 */
export const MAX_JSON_DEPTH = 973;

/** Python 3.11 refuses to convert an int literal of more digits (sys.get_int_max_str_digits()). */
export const MAX_INT_DIGITS = 4300;

/**
 * Invalid JSON bodies answer 422 the way FastAPI does with pydantic v1: one entry at
 * `["body", pos]`, type `value_error.jsondecode`, the words of Python's `json` module, and the
 * JSONDecodeError's attributes as ctx. `index` is a position in `doc` as JavaScript counts
 * (UTF-16 units); the answer counts code points, as Python does.
 */
export function jsonDecodeErrorDetail(message: string, index: number, doc = ''): ValidationErrorEntry[] {
  const pos = codePoints(doc, 0, index);
  const lineStart = index > 0 ? doc.lastIndexOf('\n', index - 1) + 1 : 0;
  const lineno = countNewlines(doc, lineStart) + 1;
  const colno = codePoints(doc, lineStart, index) + 1;
  return [
    {
      loc: ['body', pos],
      msg: `${message}: line ${lineno} column ${colno} (char ${pos})`,
      type: 'value_error.jsondecode',
      ctx: { msg: message, doc, pos, lineno, colno },
    },
  ];
}

/**
 * What a container nested deeper than `buildDepth` (the document itself is at depth 1) reads as:
 * an empty, frozen container of its kind, the same one each time. Its members are read all the
 * same, so that every error and refusal is where Python finds it, but nothing of them is kept.
 */
const UNBUILT_ARRAY: readonly unknown[] = Object.freeze([]);
const UNBUILT_OBJECT: Readonly<Record<string, unknown>> = Object.freeze({});

/** What of a document its reader looks at; the rest is read (and refused where Python refuses it) but not kept. */
export interface JsonReading {
  /** How deep the containers are that the result holds as read (the document itself is at 1). */
  readonly buildDepth?: number;
  /** The only members of the document's object that are kept, when it is an object. */
  readonly members?: ReadonlySet<string> | undefined;
}

/**
 * Parses a JSON document as Python's `json.loads` does (see above). A JSONDecodeError answers the
 * detail FastAPI would; an {@link UnreadableBody} is thrown for the failures FastAPI answers 400.
 *
 * A reader that looks no further than `reading` says (a request body's validation) saves building
 * what it would never look at: a body of half a million nested lists, or of fifty thousand
 * members the model ignores, costs the scan alone.
 */
export function parseJsonBody(text: string, reading: JsonReading = {}): ValidationResult<unknown> {
  try {
    return { ok: true, value: new Scanner(text, reading).document() };
  } catch (error) {
    if (!(error instanceof JsonDecodeError)) throw error;
    return { ok: false, detail: jsonDecodeErrorDetail(error.msg, error.index, text) };
  }
}

class JsonDecodeError extends Error {
  constructor(
    readonly msg: string,
    readonly index: number,
  ) {
    super(msg);
  }
}

const EXPECTING_VALUE = 'Expecting value';
const UNTERMINATED = 'Unterminated string starting at';
const BAD_UNICODE_ESCAPE = 'Invalid \\uXXXX escape';

/** The characters a one-letter escape stands for (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`). */
const ESCAPED: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** A run of string characters that need no decoding: no quote, no backslash, no control character. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON strings may not hold raw control characters.
const PLAIN_CHARACTERS = /[^"\\\u0000-\u001f]*/y;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** The value of four hex digits at `at`, or -1 (Python accepts either case). */
function hex4(text: string, at: number): number {
  let value = 0;
  for (let i = at; i < at + 4; i++) {
    const c = text.charCodeAt(i);
    let digit: number;
    if (c >= ZERO && c <= NINE) digit = c - ZERO;
    else if (c >= 0x61 && c <= 0x66) digit = c - 0x57;
    else if (c >= 0x41 && c <= 0x46) digit = c - 0x37;
    else return -1;
    value = (value << 4) | digit;
  }
  return value;
}

/**
 * A recursive-descent reader that follows CPython's `Modules/_json.c` step by step, so that every
 * refusal has its message and position. Positions are UTF-16 indices until the error is reported.
 */
class Scanner {
  private pos = 0;
  private depth = 0;
  /** How the number just read was written, when its container must record it. */
  private literal: string | undefined = undefined;

  private buildDepth: number;
  private readonly members: ReadonlySet<string> | undefined;

  constructor(
    private readonly text: string,
    reading: JsonReading,
  ) {
    this.buildDepth = reading.buildDepth ?? Number.POSITIVE_INFINITY;
    this.members = reading.members;
  }

  document(): unknown {
    this.pos = this.whitespace(0);
    const value = this.value();
    const end = this.whitespace(this.pos);
    if (end !== this.text.length) throw new JsonDecodeError('Extra data', end);
    return value;
  }

  private whitespace(i: number): number {
    const text = this.text;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else return i;
    }
  }

  /** Reads the value at `this.pos` (no whitespace before it) and leaves `pos` after it. */
  private value(): unknown {
    const text = this.text;
    const i = this.pos;
    this.literal = undefined;
    switch (text.charCodeAt(i)) {
      case QUOTE:
        return this.string();
      case 0x7b: // {
        return this.object();
      case 0x5b: // [
        return this.array();
      case 0x6e: // n
        if (text.startsWith('null', i)) return this.word(4, null);
        break;
      case 0x74: // t
        if (text.startsWith('true', i)) return this.word(4, true);
        break;
      case 0x66: // f
        if (text.startsWith('false', i)) return this.word(5, false);
        break;
      case 0x4e: // N
        if (text.startsWith('NaN', i)) return this.constant('NaN', Number.NaN);
        break;
      case 0x49: // I
        if (text.startsWith('Infinity', i)) return this.constant('Infinity', Number.POSITIVE_INFINITY);
        break;
      case MINUS:
        if (text.startsWith('-Infinity', i)) return this.constant('-Infinity', Number.NEGATIVE_INFINITY);
        break;
    }
    return this.number();
  }

  private word<T>(length: number, value: T): T {
    this.pos += length;
    return value;
  }

  private constant(text: string, value: number): number {
    this.pos += text.length;
    this.literal = text;
    return value;
  }

  /** `-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?`, or "Expecting value" where it starts. */
  private number(): number {
    const text = this.text;
    const start = this.pos;
    let i = start;
    if (text.charCodeAt(i) === MINUS) i++;
    const first = text.charCodeAt(i);
    let int = 0;
    if (first === ZERO) i++;
    else if (first > ZERO && first <= NINE) {
      for (let c = first; isDigit(c); c = text.charCodeAt(++i)) int = int * 10 + (c - ZERO);
    } else throw new JsonDecodeError(EXPECTING_VALUE, start);
    const intEnd = i;
    let float = false;
    if (text.charCodeAt(i) === 0x2e && isDigit(text.charCodeAt(i + 1))) {
      float = true;
      i += 2;
      while (isDigit(text.charCodeAt(i))) i++;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      let j = i + 1;
      const sign = text.charCodeAt(j);
      if (sign === MINUS || sign === 0x2b) j++;
      if (isDigit(text.charCodeAt(j))) {
        float = true;
        while (isDigit(text.charCodeAt(j))) j++;
        i = j;
      }
    }
    this.pos = i;
    if (float) {
      const literal = text.slice(start, i);
      this.literal = literal;
      return Number(literal);
    }
    const negative = text.charCodeAt(start) === MINUS;
    const digits = intEnd - start - (negative ? 1 : 0);
    // Up to 15 digits the running sum is exact; `-0` is Python's int 0.
    if (digits <= 15) return negative && int !== 0 ? -int : int;
    if (digits > MAX_INT_DIGITS) throw new UnreadableBody(`an int literal of ${digits} digits`);
    const literal = text.slice(start, i);
    const value = Number(literal);
    if (!Number.isSafeInteger(value)) this.literal = literal;
    return value;
  }

  private string(): string {
    const text = this.text;
    const begin = this.pos;
    let out = '';
    let i = begin + 1;
    for (;;) {
      // Most strings hold no escape and no control character: one native scan to the quote.
      PLAIN_CHARACTERS.lastIndex = i;
      PLAIN_CHARACTERS.test(text);
      const end = PLAIN_CHARACTERS.lastIndex;
      const c = text.charCodeAt(end);
      if (c === QUOTE) {
        this.pos = end + 1;
        return out + text.slice(i, end);
      }
      if (c === BACKSLASH) {
        out += text.slice(i, end);
        i = this.escape(end, begin);
        out += this.escaped;
      } else if (c < 0x20) {
        throw new JsonDecodeError('Invalid control character at', end);
      } else {
        throw new JsonDecodeError(UNTERMINATED, begin); // the end of the text: charCodeAt is NaN
      }
    }
  }

  /** What the escape just read stands for. */
  private escaped = '';

  /** Reads the escape at `i` (a backslash) into `escaped`, answers the index after it. */
  private escape(i: number, begin: number): number {
    const text = this.text;
    const length = text.length;
    if (i + 1 >= length) throw new JsonDecodeError(UNTERMINATED, begin);
    const kind = text[i + 1]!;
    if (kind !== 'u') {
      const escaped = ESCAPED[kind];
      if (escaped === undefined) throw new JsonDecodeError('Invalid \\escape', i);
      this.escaped = escaped;
      return i + 2;
    }
    // Python wants the four digits and one more character (the closing quote at least).
    let end = i + 6;
    if (end >= length) throw new JsonDecodeError(BAD_UNICODE_ESCAPE, i + 1);
    const unit = hex4(text, i + 2);
    if (unit < 0) throw new JsonDecodeError(BAD_UNICODE_ESCAPE, i + 1);
    this.escaped = String.fromCharCode(unit);
    // A high surrogate joins the low surrogate escape right after it, if there is one.
    if (
      unit >= 0xd800 &&
      unit <= 0xdbff &&
      end + 6 < length &&
      text.charCodeAt(end) === BACKSLASH &&
      text.charCodeAt(end + 1) === 0x75
    ) {
      const low = hex4(text, end + 2);
      if (low < 0) throw new JsonDecodeError(BAD_UNICODE_ESCAPE, end + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        this.escaped = String.fromCharCode(unit, low);
        end += 6;
      }
    }
    return end;
  }

  private enter(): void {
    if (++this.depth > MAX_JSON_DEPTH) throw new UnreadableBody('nesting too deep');
  }

  /** Past the opening bracket and any whitespace: true (and past it) when `close` follows at once. */
  private opens(close: number): boolean {
    const i = this.whitespace(this.pos + 1);
    const empty = this.text.charCodeAt(i) === close;
    this.pos = empty ? i + 1 : i;
    return !empty;
  }

  /** After a member: true (and past it) at the closing bracket, false past a comma, else Python's error. */
  private closes(close: number): boolean {
    const i = this.whitespace(this.pos);
    const c = this.text.charCodeAt(i);
    if (c === close) {
      this.pos = i + 1;
      return true;
    }
    if (c !== 0x2c) throw new JsonDecodeError("Expecting ',' delimiter", i);
    this.pos = this.whitespace(i + 1);
    return false;
  }

  /** A container is a value whose own literal is nothing. */
  private leave<T>(container: T): T {
    this.literal = undefined;
    this.depth--;
    return container;
  }

  /** An object's member name and the colon after it; leaves `pos` at the member's value. */
  private key(): string {
    const text = this.text;
    if (text.charCodeAt(this.pos) !== QUOTE) {
      throw new JsonDecodeError('Expecting property name enclosed in double quotes', this.pos);
    }
    const key = this.string();
    const colon = this.whitespace(this.pos);
    if (text.charCodeAt(colon) !== 0x3a) throw new JsonDecodeError("Expecting ':' delimiter", colon);
    this.pos = this.whitespace(colon + 1);
    return key;
  }

  private object(): Readonly<Record<string, unknown>> {
    this.enter();
    if (this.depth > this.buildDepth) return this.leave(this.unbuilt(0x7d, UNBUILT_OBJECT));
    const object: Record<string, unknown> = {};
    const members = this.depth === 1 ? this.members : undefined;
    let recorded = false;
    if (this.opens(0x7d)) {
      do {
        const key = this.key();
        if (members !== undefined && !members.has(key)) {
          this.skip();
          continue;
        }
        const value = this.value();
        if (key === '__proto__') {
          // An own member like any other, as JSON.parse makes it (never the prototype).
          Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
        } else {
          object[key] = value;
        }
        if (this.literal !== undefined) {
          recordLiteralText(object, key, this.literal);
          recorded = true;
        } else if (recorded) {
          // The last of duplicate keys wins, and so does the way it was written.
          forgetNumberLiteral(object, key);
        }
      } while (!this.closes(0x7d));
    }
    return this.leave(object);
  }

  private array(): readonly unknown[] {
    this.enter();
    if (this.depth > this.buildDepth) return this.leave(this.unbuilt(0x5d, UNBUILT_ARRAY));
    const array: unknown[] = [];
    if (this.opens(0x5d)) {
      do {
        const value = this.value();
        if (this.literal !== undefined) recordLiteralText(array, array.length, this.literal);
        array.push(value);
      } while (!this.closes(0x5d));
    }
    return this.leave(array);
  }

  /** Reads a value that is not kept: containers in it are not built. */
  private skip(): void {
    const buildDepth = this.buildDepth;
    this.buildDepth = this.depth;
    this.value();
    this.buildDepth = buildDepth;
  }

  /**
   * Reads a container nested deeper than `buildDepth` member by member, as object() and array()
   * do, checking all they check, and answers `placeholder` for it.
   */
  private unbuilt<T>(close: number, placeholder: T): T {
    if (!this.opens(close)) return placeholder;
    do {
      if (close === 0x7d) this.key();
      this.value();
    } while (!this.closes(close));
    return placeholder;
  }
}

/** Code points in `text[from, to)`: a surrogate pair is one, as Python counts. */
function codePoints(text: string, from: number, to: number): number {
  let count = to - from;
  for (let i = from; i < to - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

function countNewlines(text: string, before: number): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < before; i = text.indexOf('\n', i + 1)) count++;
  return count;
}
