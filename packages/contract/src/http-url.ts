import type { ValidationErrorEntry } from './endpoint.ts';
import { pythonInt, pythonStrRepr } from './python-builtins.ts';

/**
 * pydantic v1's URL checks (AnyUrl.validate with AnyHttpUrl's schemes), in its order, on a value
 * already converted to text and stripped (coercion.ts) and within its length (JSON Schema's
 * minLength/maxLength, which hide these when they fail): pydantic's URL pattern, then the scheme
 * (present, then allowed), the port, characters left over after the URL, and the host. pydantic's
 * regular expressions are written here with CPython's meaning of `\s` and `\d` (Unicode spaces
 * and decimal digits). As pydantic's HttpUrl, a domain needs a top-level domain (`localhost` is
 * refused, `127.0.0.1` is not: an address is no domain).
 */

type UrlProblem = Omit<ValidationErrorEntry, 'loc'>;

const ALLOWED_SCHEMES = ['http', 'https'];
/** CPython's `\s`: what str.isspace() is true for. */
const S = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const D = '\\p{Nd}';

const URL = new RegExp(
  `^(?:(?<scheme>[a-z][a-z0-9+\\-.]+)://)?` +
    `(?:(?<user>[^${S}:/]*)(?::(?<password>[^${S}/]*))?@)?` +
    `(?:(?<ipv4>(?:${D}{1,3}\\.){3}${D}{1,3})(?=$|[/:#?])|` +
    `(?<ipv6>\\[[A-F0-9]*:[A-F0-9:]+\\])(?=$|[/:#?])|` +
    `(?<domain>[^${S}/:?#]+))?` +
    `(?::(?<port>${D}+))?` +
    `(?<path>/[^${S}?#]*)?` +
    `(?:\\?(?<query>[^${S}#]*))?` +
    `(?:#(?<fragment>[^${S}#]*))?`,
  'iu',
);

const ASCII_CHUNK = '[_0-9a-z](?:[-_0-9a-z]{0,61}[_0-9a-z])?';
const ASCII_DOMAIN = new RegExp(`^(?:${ASCII_CHUNK}\\.)*?${ASCII_CHUNK}(?<tld>\\.[a-z]{2,63})?\\.?$`, 'i');
// pydantic's international chunk takes every character in the range a..U+40000, symbols included.
const INT_CHUNK = '[_0-9a-\\u{40000}](?:[-_0-9a-\\u{40000}]{0,61}[_0-9a-\\u{40000}])?';
const INT_DOMAIN = new RegExp(
  `^(?:${INT_CHUNK}\\.)*?${INT_CHUNK}(?<tld>\\.[\\p{L}\\p{Nl}\\p{No}]{2,63}|\\.xn--[_0-9a-z-]{2,63})?\\.?$`,
  'iu',
);

export function httpUrlProblem(value: string): UrlProblem | undefined {
  if (value.length === 0) return undefined; // minLength reports it
  const match = URL.exec(value)!; // every part is optional: it always matches
  const parts = match.groups!;
  if (parts.scheme === undefined)
    return { msg: 'invalid or missing URL scheme', type: 'value_error.url.scheme' };
  if (!ALLOWED_SCHEMES.includes(parts.scheme.toLowerCase())) {
    return {
      msg: 'URL scheme not permitted',
      type: 'value_error.url.scheme',
      ctx: { allowed_schemes: ALLOWED_SCHEMES },
    };
  }
  if (parts.port !== undefined && pythonInt(parts.port)! > 65_535) {
    return { msg: 'URL port invalid, port cannot exceed 65535', type: 'value_error.url.port' };
  }
  if (match[0].length !== value.length) {
    const extra = value.slice(match[0].length);
    return {
      msg: `URL invalid, extra characters found after valid URL: ${pythonStrRepr(extra)}`,
      type: 'value_error.url.extra',
      ctx: { extra },
    };
  }
  const host = parts.domain;
  if (parts.ipv4 === undefined && parts.ipv6 === undefined && host === undefined) {
    return { msg: 'URL host invalid', type: 'value_error.url.host' };
  }
  if (host === undefined) return undefined;
  const ascii = ASCII_DOMAIN.exec(host);
  const international = INT_DOMAIN.exec(host);
  if (!ascii && !international) return { msg: 'URL host invalid', type: 'value_error.url.host' };
  // pydantic reads the top-level domain from the ASCII pattern, else from the international one.
  if (ascii?.groups?.tld === undefined && international?.groups?.tld === undefined) {
    return { msg: 'URL host invalid, top level domain required', type: 'value_error.url.host' };
  }
  return undefined;
}
