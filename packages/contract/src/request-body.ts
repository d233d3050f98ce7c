import type { TSchema } from 'typebox';
import type { ValidationErrorEntry } from './endpoint.ts';
import { parseJsonBody, UnreadableBody } from './json-body.ts';
import { decodeJsonBytes } from './json-bytes.ts';

/**
 * The deepest nesting of containers a request schema describes: the body's object (1) and its
 * list fields (2). A container nested deeper is read for its kind alone (every member where a
 * list holds one is a string or a number, so a list or an object there is refused as what it is,
 * whatever it holds), and the reader builds none of it. A body sent as a list of `[name, value]`
 * pairs, which pydantic reads as a dict, has its fields one level deeper. A test of the contract
 * keeps this true of every request schema.
 */
export const MAX_REQUEST_NESTING = 2;

/** What FastAPI answers, with status 400, for a body Python fails to read. */
export const BODY_PARSE_ERROR = 'There was an error parsing the body';

/** A JSON endpoint's body as validation sees it, or the answer FastAPI gives before validation. */
export type BodyReading =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly status: 422; readonly detail: ValidationErrorEntry[] }
  | { readonly ok: false; readonly status: 400; readonly detail: string };

/**
 * Reads the body of a request to a JSON endpoint as FastAPI 0.92 does (`get_request_handler`):
 *
 * - no bytes: no body (validation answers `field required` at ["body"]);
 * - no Content-Type, or a JSON one (see {@link readsAsJson}): the bytes as `json.loads` reads them
 *   (json-bytes.ts, json-body.ts): a JSONDecodeError answers 422, any other failure 400;
 * - any other Content-Type: the bytes themselves, which no model accepts (`value is not a valid
 *   dict`, python-dict.ts).
 *
 * Given the body's schema, the reader keeps only the members it names (see membersOf).
 */
export function readRequestBody(
  bytes: Uint8Array,
  contentType: string | undefined,
  schema?: TSchema,
): BodyReading {
  if (bytes.length === 0) return { ok: true, value: undefined };
  if (!readsAsJson(contentType)) return { ok: true, value: bytes };
  try {
    const text = decodeJsonBytes(bytes);
    const parsed = parseJsonBody(text, {
      buildDepth: MAX_REQUEST_NESTING + (startsWithList(text) ? 1 : 0),
      members: schema && membersOf(schema),
    });
    return parsed.ok ? parsed : { ok: false, status: 422, detail: parsed.detail };
  } catch (error) {
    if (error instanceof UnreadableBody) return { ok: false, status: 400, detail: BODY_PARSE_ERROR };
    throw error;
  }
}

/** Whitespace to Python's `str.strip()`, among the Latin-1 characters a header value holds. */
function isPythonSpace(c: number): boolean {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c === 0x85 || c === 0xa0;
}

function pythonStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isPythonSpace(text.charCodeAt(start))) start++;
  while (end > start && isPythonSpace(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

/**
 * Whether FastAPI reads a body with this Content-Type as JSON: none (or an empty one), or one whose
 * type is `application` and subtype `json` or `*+json`, as `email.message.Message` reads the
 * header: the part before the first `;`, stripped and lower-cased, with exactly one `/` (any other
 * value counts as `text/plain`).
 */
export function readsAsJson(contentType: string | undefined): boolean {
  if (!contentType) return true;
  const semicolon = contentType.indexOf(';');
  const type = pythonStrip(semicolon === -1 ? contentType : contentType.slice(0, semicolon)).toLowerCase();
  const slash = type.indexOf('/');
  if (slash === -1 || type.indexOf('/', slash + 1) !== -1) return false;
  const subtype = type.slice(slash + 1);
  return type.slice(0, slash) === 'application' && (subtype === 'json' || subtype.endsWith('+json'));
}

/** Whether the document is a list: its first character past JSON's whitespace is `[`. */
function startsWithList(text: string): boolean {
  return /^[ \t\n\r]*\[/.test(text);
}

const members = new WeakMap<TSchema, ReadonlySet<string> | undefined>();

/**
 * The members a body schema names: validation drops any other (pydantic ignores them), so the
 * reader need not keep them. None for a schema that names no members of its own.
 */
function membersOf(schema: TSchema): ReadonlySet<string> | undefined {
  if (!members.has(schema)) {
    const properties = (schema as { properties?: Record<string, unknown> }).properties;
    members.set(schema, properties ? new Set(Object.keys(properties)) : undefined);
  }
  return members.get(schema);
}
