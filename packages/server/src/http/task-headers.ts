import type { FastifyRequest } from 'fastify';
import { HttpError } from './http-errors.ts';

/**
 * The HTTP headers a task submission reads besides API-Key: `Prefer: wait=N` and
 * `Idempotency-Key`. They are HTTP's own syntax, not fields of a body, so they are read here; a
 * malformed one answers 422 located at ["header", name], as FastAPI locates a header parameter.
 */

/** The longest `Prefer: wait=N` a submission may hold its answer, in seconds. */
export const MAX_WAIT_SECONDS = 60;
const MAX_KEY_LENGTH = 255;

/** Seconds the caller will wait for the task to end (0: answer at once, the default). */
export function preferredWait(request: FastifyRequest): number {
  const header = request.headers.prefer;
  if (header === undefined) return 0;
  // Preferences are comma-separated (and may come in several headers); parameters follow a `;`.
  for (const preference of [header].flat().join(',').split(',')) {
    const [name = '', ...value] = (preference.split(';')[0] ?? '').split('=');
    if (name.trim().toLowerCase() !== 'wait') continue;
    const seconds = value
      .join('=')
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (!/^\d{1,6}$/.test(seconds) || Number(seconds) > MAX_WAIT_SECONDS) {
      throw headerError(
        'Prefer',
        `wait must be a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`,
        'value_error.prefer.wait',
      );
    }
    return Number(seconds);
  }
  return 0;
}

/** The submission's Idempotency-Key, if it sent one. */
export function idempotencyKey(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  const key = [header].flat().join(', ').trim();
  if (key === '' || key.length > MAX_KEY_LENGTH || !/^[\x20-\x7e]+$/.test(key)) {
    throw headerError(
      'Idempotency-Key',
      `an Idempotency-Key is 1 to ${MAX_KEY_LENGTH} visible ASCII characters`,
      'value_error.idempotency_key',
    );
  }
  return key;
}

/** A 422 about a request header, in FastAPI's shape. */
export function headerError(name: string, msg: string, type: string): HttpError {
  return new HttpError(422, [{ loc: ['header', name], msg, type }]);
}
