import type { FastifyRequest } from 'fastify';
import { HttpError } from './http-errors.ts';

/**
 * The HTTP headers a task submission reads besides API-Key: `Prefer: wait=N`, `Idempotency-Key`
 * and `Cancel-After`. They are HTTP's own syntax, not fields of a body, so they are read here; a
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

/** Cancel-After's bounds: a deadline under a second cannot be kept, one over a day is a mistake. */
export const MIN_CANCEL_AFTER_MS = 1_000;
export const MAX_CANCEL_AFTER_MS = 24 * 3_600_000;
/**
 * A duration as Replicate's Cancel-After writes it: whole numbers with units, largest first, each
 * unit once (`30s`, `5m`, `1h30m`, `1s500ms`). Bounded digits and no nested repetition: linear.
 */
const DURATION = /^(?:(\d{1,6})h)?(?:(\d{1,6})m(?!s))?(?:(\d{1,6})s)?(?:(\d{1,9})ms)?$/;
const UNIT_MS = [3_600_000, 60_000, 1_000, 1];

/**
 * The submission's deadline (Cancel-After), if it sent one: its length, and its text as sent for
 * the error that will name it. Absent, it costs one header lookup.
 */
export function cancelAfter(request: FastifyRequest): { ms: number; text: string } | undefined {
  const header = request.headers['cancel-after'];
  if (header === undefined) return undefined;
  const text = [header].flat().join(', ').trim();
  const parts = text.length <= 40 && text !== '' ? DURATION.exec(text) : null;
  const ms = parts ? UNIT_MS.reduce((sum, unit, i) => sum + Number(parts[i + 1] ?? 0) * unit, 0) : 0;
  if (ms < MIN_CANCEL_AFTER_MS || ms > MAX_CANCEL_AFTER_MS) {
    throw headerError(
      'cancel-after',
      'Cancel-After must be a duration from 1s to 24h: whole numbers with the units h, m, s, ms in that order, such as 30s, 5m, 1h30m or 1s500ms',
      'value_error.cancel_after',
    );
  }
  return { ms, text };
}

/** A 422 about a request header, in FastAPI's shape. */
export function headerError(name: string, msg: string, type: string): HttpError {
  return new HttpError(422, [{ loc: ['header', name], msg, type }]);
}
