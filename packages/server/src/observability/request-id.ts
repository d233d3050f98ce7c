import { randomUUID } from 'node:crypto';

/** A caller's id is used as is when it is short and plain: no spaces, quotes or control characters. */
const ACCEPTED = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * The request id of an API request: the caller's `X-Request-Id` when it is acceptable (a proxy or
 * client that set one keeps following it), else a new uuid. It is echoed in the response, put on
 * every log line of the request, and recorded with a task the request creates.
 */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === 'string' && ACCEPTED.test(header) ? header : randomUUID();
}
