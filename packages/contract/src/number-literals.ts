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
 * per body, on every request that sends a float.)
 */
const LITERALS = Symbol('number literals');

type Recorded = { [LITERALS]?: Map<string | number, NumberLiteral> };

/** Records that `container[key]` was parsed from `literal` (floats, and ints beyond the safe range). */
export function recordNumberLiteral(container: object, key: string | number, literal: NumberLiteral): void {
  let members = (container as Recorded)[LITERALS];
  if (!members) {
    members = new Map();
    Object.defineProperty(container, LITERALS, { value: members });
  }
  members.set(key, literal);
}

/** Forgets how `container[key]` was written (a later duplicate key replaced that member). */
export function forgetNumberLiteral(container: object, key: string | number): void {
  (container as Recorded)[LITERALS]?.delete(key);
}

/**
 * How `container[key]` was written, when the parser recorded it; undefined means an int literal
 * within the safe range (or a value that did not come from a parsed body).
 */
export function numberLiteral(container: object, key: string | number): NumberLiteral | undefined {
  return (container as Recorded)[LITERALS]?.get(key);
}
