import { readFileSync } from 'node:fs';

/**
 * Raw request bodies and what FastAPI 0.92 with pydantic 1.10 answered for them
 * (fixtures/decode.golden.json), recorded on models mirroring the contract's fields: Python's
 * json module reading the bytes (NaN, 1e400, byte-order marks, UTF-16/32, invalid UTF-8, decode
 * errors and their positions), bodies that are not objects (pydantic's `dict(value)`), and
 * Content-Types. The contract's test replays the JSON endpoints' cases through its body reader
 * and validator; the server's replays every case over HTTP, the upload endpoint's too.
 */
export interface DecodeCase {
  path: string;
  /** Absent: the request had no Content-Type header. */
  contentType?: string;
  /** The body as text (its UTF-8 bytes), or `base64` for bytes that are not UTF-8 text. */
  raw?: string;
  base64?: string;
  status: 200 | 400 | 422;
  /** A refusal's body, or for an accepted body the fields that were sent, as the model held them. */
  response: { detail: unknown } | { accepted: Record<string, unknown> };
}

export const decodeGolden: Record<string, DecodeCase> = JSON.parse(
  readFileSync(new URL('../fixtures/decode.golden.json', import.meta.url), 'utf8'),
);

/** The exact bytes the case sends. */
export function requestBytes(golden: DecodeCase): Buffer {
  return golden.base64 === undefined
    ? Buffer.from(golden.raw!, 'utf8')
    : Buffer.from(golden.base64, 'base64');
}

/**
 * A value as the reference writes it: its JSON holds no NaN or infinity, so an accepted float
 * that is one is written under its json name, quoted.
 */
export function jsonNames(value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  }
  return Array.isArray(value) ? value.map(jsonNames) : value;
}
