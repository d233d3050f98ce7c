/**
 * Python's json module, which the original FastAPI service reads bodies with, keeps two kinds of
 * number: `5` is an int of any size, `5.0`, `1e3`, `NaN` and `Infinity` are floats. pydantic v1
 * then depends on the kind, e.g. a number sent where a string is expected becomes `str(n)`: "5"
 * for the int, "5.0" for the float, and every digit of an int too large for a JavaScript number.
 * JavaScript keeps neither, so the body parser records, per object or array, the members whose
 * JSON literal was a float or an int beyond Number.MAX_SAFE_INTEGER; validation reads them here.
 */

export interface NumberLiteral {
  /** true for a float literal (fraction, exponent, NaN, Infinity, -Infinity). */
  readonly float: boolean;
  /** The literal as written in the body. */
  readonly text: string;
}

/**
 * Each container keeps its records under a symbol, as a property that is not enumerable: JSON,
 * `Object.keys`, spreads and equality checks never see it. (A WeakMap costs several times more
 * per body, on every request that sends a float.) Only the literal's text is kept (its kind is
 * read from it), an array's by position in an array of its own: a body may hold a record per
 * item of a list of a hundred thousand floats, and a string each is all that costs.
 */
const LITERALS = Symbol('number literals');

type Records = Map<string | number, string> | (string | undefined)[];
type Recorded = { [LITERALS]?: Records };

/** An int literal is digits, with a minus sign at most; anything else the parser records is a float. */
const INT_LITERAL = /^-?\d+$/;

/** Records that `container[key]` was written as `text` (floats, and ints beyond the safe range). */
export function recordLiteralText(container: object, key: string | number, text: string): void {
  let records = (container as Recorded)[LITERALS];
  if (!records) {
    records = Array.isArray(container) ? [] : new Map();
    Object.defineProperty(container, LITERALS, { value: records });
  }
  if (Array.isArray(records)) records[key as number] = text;
  else records.set(key, text);
}

/** Records that `container[key]` was parsed from `literal`. */
export function recordNumberLiteral(container: object, key: string | number, literal: NumberLiteral): void {
  recordLiteralText(container, key, literal.text);
}

/** Forgets how `container[key]` was written (a later duplicate key replaced that member). */
export function forgetNumberLiteral(container: object, key: string | number): void {
  const records = (container as Recorded)[LITERALS];
  if (Array.isArray(records)) records[key as number] = undefined;
  else records?.delete(key);
}

/**
 * How `container[key]` was written, when the parser recorded it; undefined means an int literal
 * within the safe range (or a value that did not come from a parsed body).
 */
export function numberLiteral(container: object, key: string | number): NumberLiteral | undefined {
  const records = (container as Recorded)[LITERALS];
  const text = Array.isArray(records) ? records[key as number] : records?.get(key);
  return text === undefined ? undefined : { float: !INT_LITERAL.test(text), text };
}
