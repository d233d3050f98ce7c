/**
 * CPython's own rules for the builtins pydantic v1 converts and reports with: `int(text)`,
 * `float(text)`, `str(number)`, `repr(text)` and `str.strip()`. pydantic calls these directly, so
 * a client of the original service can send " 512 ", "1_000" or "٣" for an integer and gets
 * "1e+16" back when a float lands in a string field. The tables below are CPython 3.11's
 * (Unicode 14).
 */

/**
 * Characters `str.isspace()` is true for. `str.strip()` removes these; int() and float() take the
 * non-ASCII ones of them as spaces, and of the ASCII ones only " \t\n\v\f\r" (not \x1c-\x1f).
 */
const UNICODE_SPACES = new Set(
  '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000',
);
const NON_ASCII_SPACES = new Set([...UNICODE_SPACES].filter((c) => c > '\x7f'));

/** The zero of every run of Unicode decimal digits (category Nd): each run is zero to nine in order. */
const DIGIT_ZEROS = [
  0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xde6, 0xe50,
  0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90, 0x1b50, 0x1bb0, 0x1c40,
  0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10, 0x104a0, 0x10d30, 0x11066, 0x110f0,
  0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650, 0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50,
  0x11da0, 0x16a60, 0x16ac0, 0x16b50, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950,
  0x1fbf0,
];

/** pydantic refuses longer integer strings before int() sees them (CPython's digit limit). */
const MAX_INT_TEXT = 4300;

const INT_TEXT = /^[+-]?\d(?:_?\d)*$/;
const DIGITS = '\\d(?:_?\\d)*';
const FLOAT_TEXT = new RegExp(
  `^[+-]?(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?$`,
);
const FLOAT_WORD = /^([+-]?)(?:(inf(?:inity)?)|nan)$/i;
const ASCII_SPACE = /^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g;

/**
 * What int() and float() read: each non-ASCII space becomes " ", each Unicode decimal digit its
 * ASCII digit and anything else non-ASCII a character no number contains, then ASCII spaces are
 * cut from both ends.
 */
function numberText(text: string): string {
  let ascii = text;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the test is for non-ASCII characters.
  if (/[^\x00-\x7f]/.test(text)) {
    ascii = '';
    for (const char of text) {
      const code = char.codePointAt(0)!;
      if (code < 0x7f) ascii += char;
      else if (NON_ASCII_SPACES.has(char)) ascii += ' ';
      else ascii += decimalDigit(code) ?? '?';
    }
  }
  return ascii.replace(ASCII_SPACE, '');
}

function decimalDigit(code: number): string | undefined {
  for (const zero of DIGIT_ZEROS) {
    if (code >= zero && code <= zero + 9) return String(code - zero);
  }
  return undefined;
}

/**
 * `int(text)` as pydantic's int_validator calls it: undefined where it raises. An integer beyond
 * the doubles is held as the largest double of its sign (every integer past 2**53 is already
 * approximate here, as JavaScript holds it).
 */
export function pythonInt(text: string): number | undefined {
  if (text.length > MAX_INT_TEXT) return undefined;
  const ascii = numberText(text);
  if (!INT_TEXT.test(ascii)) return undefined;
  return clampInteger(Number(ascii.replace(/_/g, '')));
}

/** An integer too large for a double, held as the largest one of its sign. */
export function clampInteger(value: number): number {
  if (value === Number.POSITIVE_INFINITY) return Number.MAX_VALUE;
  if (value === Number.NEGATIVE_INFINITY) return -Number.MAX_VALUE;
  return value === 0 ? 0 : value; // Python has no -0 integer
}

/** `float(text)`: undefined where it raises. "inf", "-Infinity" and "nan" are floats too. */
export function pythonFloat(text: string): number | undefined {
  const ascii = numberText(text);
  if (FLOAT_TEXT.test(ascii)) return Number(ascii.replace(/_/g, ''));
  const word = FLOAT_WORD.exec(ascii);
  if (!word) return undefined;
  if (!word[2]) return Number.NaN;
  return word[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
}

/**
 * `str(x)` of a float (its repr): the shortest digits that read back as x, as JavaScript's also
 * are, written in exponent form below 1e-4 and from 1e16 up ("1e-05", "1e+16"), with ".0" on whole
 * numbers ("5.0"), and "inf", "-inf", "nan".
 */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, power] = x.toExponential().split('e') as [string, string];
  const exponent = Number(power);
  const sign = x < 0 ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  if (exponent < -4 || exponent >= 16) {
    const written = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const size = String(Math.abs(exponent)).padStart(2, '0');
    return `${sign}${written}e${exponent < 0 ? '-' : '+'}${size}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  return `${sign}${whole}.${digits.slice(exponent + 1) || '0'}`;
}

/** `str(n)` of a Python int held as a double: every digit (JavaScript writes 1e+21 from 1e21 up). */
export function pythonIntRepr(n: number): string {
  return Math.abs(n) < 1e21 ? String(n === 0 ? 0 : n) : BigInt(n).toString();
}

/** `text.strip()`: Python's whitespace, which differs from String.prototype.trim's. */
export function pythonStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && UNICODE_SPACES.has(text[start]!)) start++;
  while (end > start && UNICODE_SPACES.has(text[end - 1]!)) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** Characters `str.isprintable()` is false for, which repr() escapes (the space excepted). */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** `repr(text)`: single quotes unless the text holds one and no double quote; escapes as CPython's. */
export function pythonStrRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    if (char === quote || char === '\\') out += `\\${char}`;
    else if (char === '\t') out += '\\t';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char !== ' ' && UNPRINTABLE.test(char)) {
      const code = char.codePointAt(0)!;
      const [prefix, width] = code < 0x100 ? ['x', 2] : code < 0x10000 ? ['u', 4] : ['U', 8];
      out += `\\${prefix}${code.toString(16).padStart(width, '0')}`;
    } else out += char;
  }
  return out + quote;
}
