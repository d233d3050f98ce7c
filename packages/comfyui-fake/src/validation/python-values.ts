/**
 * ComfyUI is Python: its validation converts input values with `int()`, `float()`, `str()` and
 * `bool()`, and writes values into its error texts with `str()`/`repr()`. These functions give the
 * same results for values parsed from JSON, so the error bodies read exactly as the server's.
 *
 * JSON.parse keeps no difference between `7` and `7.0`; a number here is a Python int when it is
 * integral, unless the caller knows it is a float (a converted FLOAT input, a FLOAT input's bounds).
 */

import { pythonFloatRepr, pythonIntRepr, pythonStrRepr } from '@imagegen/contract';

/** A Python exception raised by a conversion: its class name and `str(exception)`. */
export class PythonError extends Error {
  constructor(
    readonly pythonType: string,
    message: string,
  ) {
    super(message);
  }
}

/** A number as Python holds it: `float: true` for a float, else an int. */
export interface PyNumber {
  readonly value: number;
  readonly float: boolean;
}

/** Python's `type(x).__name__` for a JSON value. */
export function pyTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  if (Array.isArray(value)) return 'list';
  return 'dict';
}

export function pyNumberStr(n: PyNumber): string {
  return n.float ? pythonFloatRepr(n.value) : pythonIntRepr(n.value);
}

/** `repr(x)` of a JSON value (how Python prints it inside a list or dict). */
export function pyRepr(value: unknown): string {
  if (typeof value === 'string') return pythonStrRepr(value);
  return pyStr(value);
}

/** `str(x)` of a JSON value. */
export function pyStr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return pyNumberStr({ value, float: !Number.isInteger(value) });
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  const members = Object.entries(value as Record<string, unknown>).map(
    ([k, v]) => `${pythonStrRepr(k)}: ${pyRepr(v)}`,
  );
  return `{${members.join(', ')}}`;
}

/** Digits with single underscores between them, as Python's int() and float() accept them. */
const DIGITS = '\\d(?:_?\\d)*';
const INT_LITERAL = new RegExp(`^[+-]?${DIGITS}$`);
const FLOAT_LITERAL = new RegExp(
  `^[+-]?(?:(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf|infinity|nan)$`,
  'i',
);

/** `int(x)`: truncates floats, parses decimal strings, refuses the rest as Python does. */
export function pyInt(value: unknown): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') {
    if (Number.isNaN(value)) throw new PythonError('ValueError', 'cannot convert float NaN to integer');
    if (!Number.isFinite(value))
      throw new PythonError('OverflowError', 'cannot convert float infinity to integer');
    return Math.trunc(value);
  }
  if (typeof value === 'string') {
    const text = value.trim();
    if (INT_LITERAL.test(text)) return Number(text.replaceAll('_', ''));
    throw new PythonError('ValueError', `invalid literal for int() with base 10: ${pythonStrRepr(value)}`);
  }
  throw new PythonError(
    'TypeError',
    `int() argument must be a string, a bytes-like object or a real number, not '${pyTypeName(value)}'`,
  );
}

/** `float(x)`. */
export function pyFloat(value: unknown): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const text = value.trim();
    if (FLOAT_LITERAL.test(text)) {
      const lower = text.toLowerCase().replaceAll('_', '');
      if (lower.endsWith('nan')) return Number.NaN;
      if (lower.endsWith('inf') || lower.endsWith('infinity'))
        return lower.startsWith('-') ? -Infinity : Infinity;
      return Number(lower);
    }
    throw new PythonError('ValueError', `could not convert string to float: ${pythonStrRepr(value)}`);
  }
  throw new PythonError(
    'TypeError',
    `float() argument must be a string or a real number, not '${pyTypeName(value)}'`,
  );
}

/** `bool(x)`: Python truthiness. */
export function pyBool(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return Boolean(value);
}

/** `a == b` for JSON values: True == 1 == 1.0, lists and dicts compared member by member. */
export function pyEquals(a: unknown, b: unknown): boolean {
  const numeric = (v: unknown) => typeof v === 'number' || typeof v === 'boolean';
  if (numeric(a) && numeric(b)) return Number(a) === Number(b);
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => pyEquals(v, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length &&
      ka.every(
        (k) => k in b && pyEquals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return a === b || (a == null && b == null);
}
