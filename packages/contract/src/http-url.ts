import type { ValidationErrorEntry } from './endpoint.ts';

/**
 * pydantic v1's AnyHttpUrl checks, in its order: scheme present, scheme allowed, port, host. The
 * length checks are JSON Schema's minLength/maxLength, which run beside this one.
 */

type UrlProblem = Omit<ValidationErrorEntry, 'loc'>;

const SCHEME = /^([a-z][a-z0-9+\-.]+):\/\//i;
const ALLOWED_SCHEMES = ['http', 'https'];
// After the scheme: optional user info, then the host (IPv4, [IPv6] or a name) and an optional port.
const AUTHORITY = /^(?:[^\s:/]*(?::[^\s/]*)?@)?(\[[A-F0-9]*:[A-F0-9:]+\]|[^\s/:?#]*)(?::(\d+))?/i;
const DOMAIN =
  /^(?:[_0-9\p{L}\p{N}](?:[-_0-9\p{L}\p{N}]{0,61}[_0-9\p{L}\p{N}])?\.)*?[_0-9\p{L}\p{N}](?:[-_0-9\p{L}\p{N}]{0,61}[_0-9\p{L}\p{N}])?(?:\.[\p{L}]{2,63}|\.xn--[_0-9a-z-]{2,63})?\.?$/iu;

export function httpUrlProblem(raw: string): UrlProblem | undefined {
  const value = raw.trim();
  if (value.length === 0) return undefined; // minLength reports it
  const scheme = SCHEME.exec(value);
  if (!scheme) return { msg: 'invalid or missing URL scheme', type: 'value_error.url.scheme' };
  if (!ALLOWED_SCHEMES.includes(scheme[1]!.toLowerCase())) {
    return {
      msg: 'URL scheme not permitted',
      type: 'value_error.url.scheme',
      ctx: { allowed_schemes: ALLOWED_SCHEMES },
    };
  }
  const authority = AUTHORITY.exec(value.slice(scheme[0].length));
  const host = authority?.[1] ?? '';
  const port = authority?.[2];
  if (port !== undefined && Number(port) > 65535) {
    return { msg: 'URL port invalid, port cannot exceed 65535', type: 'value_error.url.port' };
  }
  if (host === '') return { msg: 'URL host invalid', type: 'value_error.url.host' };
  if (!host.startsWith('[') && !DOMAIN.test(host)) {
    return { msg: 'URL host invalid', type: 'value_error.url.host' };
  }
  return undefined;
}
