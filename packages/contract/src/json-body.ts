import type { ValidationErrorEntry, ValidationResult } from './endpoint.ts';

/**
 * Invalid JSON bodies answer 422 the way FastAPI does with pydantic v1: one entry at
 * `["body", pos]`, type `value_error.jsondecode`, the words of Python's `json` module, and the
 * JSONDecodeError's attributes as ctx.
 */
export function jsonDecodeErrorDetail(message: string, position: number, doc = ''): ValidationErrorEntry[] {
  const before = doc.slice(0, position);
  const lineno = before.split('\n').length;
  const colno = position - before.lastIndexOf('\n');
  return [
    {
      loc: ['body', position],
      msg: `${message}: line ${lineno} column ${colno} (char ${position})`,
      type: 'value_error.jsondecode',
      ctx: { msg: message, doc, pos: position, lineno, colno },
    },
  ];
}

/** Parses a JSON body; on failure answers the detail FastAPI would, with Python's message and position. */
export function parseJsonBody(text: string): ValidationResult<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    const problem = pythonJsonError(text);
    return { ok: false, detail: jsonDecodeErrorDetail(problem.msg, problem.pos, text) };
  }
}

class DecodeError extends Error {
  constructor(
    readonly msg: string,
    readonly pos: number,
  ) {
    super(msg);
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/**
 * Re-reads a body JSON.parse rejected, the way CPython's json scanner does, to find its message
 * and position (V8's words and positions differ). Only runs on bodies that already failed.
 */
function pythonJsonError(s: string): { msg: string; pos: number } {
  const ws = (i: number) => {
    while (i < s.length && ' \t\n\r'.includes(s[i]!)) i++;
    return i;
  };
  const fail = (msg: string, pos: number): never => {
    throw new DecodeError(msg, pos);
  };
  const string = (begin: number): number => {
    let i = begin + 1;
    for (;;) {
      if (i >= s.length) fail('Unterminated string starting at', begin);
      const c = s[i]!;
      if (c === '"') return i + 1;
      if (c === '\\') {
        if (i + 1 >= s.length) fail('Unterminated string starting at', begin);
        const esc = s[i + 1]!;
        if (esc === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(s.slice(i + 2, i + 6))) fail('Invalid \\uXXXX escape', i);
          i += 6;
        } else {
          if (!ESCAPES.has(esc)) fail('Invalid \\escape', i);
          i += 2;
        }
        continue;
      }
      if (c.charCodeAt(0) <= 0x1f) fail('Invalid control character at', i);
      i++;
    }
  };
  const value = (i: number): number => {
    const c = s[i];
    if (c === '"') return string(i);
    if (c === '{') return object(i + 1);
    if (c === '[') return array(i + 1);
    for (const word of ['null', 'true', 'false', 'NaN', 'Infinity', '-Infinity']) {
      if (s.startsWith(word, i)) return i + word.length;
    }
    NUMBER.lastIndex = i;
    if (NUMBER.test(s)) return NUMBER.lastIndex;
    return fail('Expecting value', i);
  };
  const object = (i: number): number => {
    i = ws(i);
    if (s[i] === '}') return i + 1;
    for (;;) {
      if (s[i] !== '"') fail('Expecting property name enclosed in double quotes', i);
      i = ws(string(i));
      if (s[i] !== ':') fail("Expecting ':' delimiter", i);
      i = ws(value(ws(i + 1)));
      if (s[i] === '}') return i + 1;
      if (s[i] !== ',') fail("Expecting ',' delimiter", i);
      i = ws(i + 1);
    }
  };
  const array = (i: number): number => {
    i = ws(i);
    if (s[i] === ']') return i + 1;
    for (;;) {
      i = ws(value(i));
      if (s[i] === ']') return i + 1;
      if (s[i] !== ',') fail("Expecting ',' delimiter", i);
      i = ws(i + 1);
    }
  };
  try {
    const end = ws(value(ws(0)));
    if (end !== s.length) fail('Extra data', end);
    // JSON.parse refused something Python takes (a lone surrogate, say): report it at the start.
    return { msg: 'Expecting value', pos: 0 };
  } catch (error) {
    if (error instanceof DecodeError) return { msg: error.msg, pos: error.pos };
    throw error;
  }
}
