/**
 * A recorded exchange in another protocol the API speaks (OpenAI's Images API, MCP): real requests
 * and what the API answered, in order, as `npm run --silent docs:examples` recorded them from the
 * product (examples/record-protocols.mts) into examples/recorded-protocols/<name>.json. What
 * changes from run to run (ids, hosts, keys, times, image data) is written as a placeholder in
 * angle brackets, so a new recording of the same behaviour is the same file.
 */

/** A part of a form (an edit): a text field, or a file described by what it holds. */
export type FormPart =
  | { readonly name: string; readonly value: string }
  | { readonly name: string; readonly file: string; readonly type: string; readonly size: string };

export interface ProtocolRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** The headers that matter to the exchange, the key written `<your key>`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly form?: readonly FormPart[];
}

export interface ProtocolAnswer {
  readonly status: number;
  /** The answer's Content-Type, and the headers a client acts on (Retry-After, x-should-retry). */
  readonly headers: Readonly<Record<string, string>>;
  /** A JSON answer's body. */
  readonly body?: unknown;
  /** A stream's events (`text/event-stream`), each event's data as JSON, in order. */
  readonly events?: readonly unknown[];
  /** What the answer's image links served, fetched as a client would: `PNG, 1216 × 832`. */
  readonly served?: readonly string[];
}

export interface ProtocolStep {
  /** What the step shows, in a sentence of the page. */
  readonly title: string;
  readonly request: ProtocolRequest;
  readonly answer: ProtocolAnswer;
}

export interface ProtocolExchange {
  /** The recording's name: its file name, and what a page names it by. */
  readonly name: string;
  readonly steps: readonly ProtocolStep[];
}

/** `curl`-like first line of a request: `POST /v1/images/generations`. */
export function requestLine(request: ProtocolRequest): string {
  return `${request.method} ${request.path}`;
}
