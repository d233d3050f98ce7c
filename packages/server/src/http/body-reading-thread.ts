import { compileValidator, readRequestBody } from '@imagegen/contract';
import { serveThread } from '@imagegen/engines/threads';
import { requestSchemaOf } from './request-schemas.ts';

/**
 * The thread that reads and validates large request bodies (large-bodies.ts): the same reading
 * and the same validator as the event loop uses for small ones, so the answers are the same. A
 * refusal comes back as the JSON text of the answer, written here: a body of many thousand
 * failing values has a detail list of as many entries, and writing it out is work too.
 */

export interface BodyToRead {
  readonly method: string;
  readonly url: string;
  readonly bytes: Uint8Array;
  readonly contentType: string | undefined;
}

export type BodyRead =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly status: number; readonly json: Uint8Array };

const utf8 = new TextEncoder();

/** The answer's bytes, in a buffer of their own (moved to the event loop's thread, not copied). */
function refusal(status: number, detail: unknown): BodyRead {
  return { ok: false, status, json: utf8.encode(JSON.stringify({ detail })) };
}

serveThread<BodyToRead, BodyRead>(
  ({ method, url, bytes, contentType }) => {
    const schema = requestSchemaOf(method, url);
    if (!schema) throw new Error(`${method} ${url} has no request body schema`);
    const reading = readRequestBody(bytes, contentType, schema);
    if (!reading.ok) return refusal(reading.status, reading.detail);
    const checked = compileValidator(schema, 'body')(reading.value);
    return checked.ok ? { ok: true, value: checked.value } : refusal(422, checked.detail);
  },
  (read) => (read.ok ? [] : [read.json.buffer as ArrayBuffer]),
);
