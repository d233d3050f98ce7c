import type { ValidationResult } from './endpoint.ts';
import { type NumberLiteral, numberLiteral, recordNumberLiteral } from './number-literals.ts';

/**
 * The object a request model validates, made from a body the way pydantic v1's `Model.validate`
 * makes it: a dict as it is, anything else through Python's `dict(value)` (a failure is
 * `value is not a valid dict`), then `cls(**dict)`, where a key that is not a string is a
 * TypeError (`keywords must be strings`), and so is the one keyword `BaseModel.__init__` takes
 * itself. So `[]` is `{}`, `[["prompt", "x"]]` is `{"prompt": "x"}`, `["ab"]` is `{"a": "b"}`.
 *
 * A missing body (undefined, or JSON `null`) is left for the validator to answer `field required`.
 */
export function modelInput(body: unknown): ValidationResult<unknown> {
  if (body === undefined || body === null) return { ok: true, value: body };
  if (Array.isArray(body)) return keywords(dictFromPairs(body));
  if (typeof body === 'object' && !(body instanceof Uint8Array))
    return keywords(body as Record<string, unknown>);
  // dict("") is {}; any other string has one-character items; bytes, numbers and booleans have
  // no pairs at all.
  if (body === '') return { ok: true, value: {} };
  return notADict();
}

/** The `self` parameter of pydantic v1's `BaseModel.__init__`, which no keyword may repeat. */
const SELF_KEYWORD = '__pydantic_self__';

function keywords(dict: Record<string, unknown> | 'not a dict' | 'not keywords'): ValidationResult<unknown> {
  if (dict === 'not a dict') return notADict();
  if (dict === 'not keywords') return typeError('keywords must be strings');
  if (Object.hasOwn(dict, SELF_KEYWORD)) {
    return typeError(`BaseModel.__init__() got multiple values for argument '${SELF_KEYWORD}'`);
  }
  return { ok: true, value: dict };
}

function notADict(): ValidationResult<unknown> {
  return {
    ok: false,
    detail: [{ loc: ['body'], msg: 'value is not a valid dict', type: 'type_error.dict' }],
  };
}

function typeError(msg: string): ValidationResult<unknown> {
  return { ok: false, detail: [{ loc: ['body'], msg, type: 'type_error' }] };
}

/**
 * `dict(items)`: each item must be iterable with exactly two members, a key (hashable: not a list
 * or an object) and a value; the last of equal keys wins. Iterating a string gives its characters
 * and iterating an object its keys. A number written as a pair's value keeps how it was written.
 */
function dictFromPairs(items: readonly unknown[]): Record<string, unknown> | 'not a dict' | 'not keywords' {
  const entries = new Map<string, { value: unknown; literal: NumberLiteral | undefined }>();
  let stringKeys = true;
  for (const item of items) {
    const pair = membersOf(item);
    if (pair?.length !== 2) return 'not a dict';
    const [key, value] = pair;
    if (typeof key === 'object' && key !== null) return 'not a dict'; // unhashable
    if (typeof key !== 'string') {
      stringKeys = false; // a valid dict, but not keywords: known only once every item is read
      continue;
    }
    entries.set(key, { value, literal: Array.isArray(item) ? numberLiteral(item, 1) : undefined });
  }
  if (!stringKeys) return 'not keywords';
  const dict: Record<string, unknown> = {};
  for (const [key, { value, literal }] of entries) {
    Object.defineProperty(dict, key, { value, writable: true, enumerable: true, configurable: true });
    if (literal) recordNumberLiteral(dict, key, literal);
  }
  return dict;
}

/** What Python's iteration of a JSON value gives, or undefined where it is not iterable. */
function membersOf(value: unknown): readonly unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return [...value];
  if (typeof value === 'object' && value !== null) return Object.keys(value);
  return undefined;
}
