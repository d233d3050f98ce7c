import { get, type IncomingMessage } from 'node:http';

/**
 * A small Server-Sent Events reader over HTTP, for the status stream tests: it hands out each
 * event (its fields as sent) and each comment, in order, and null once the server ended the stream.
 */

export interface StreamMessage {
  /** `id`, `data`, `event`, `retry` as sent; a comment (`: keep-alive`) has `comment` only. */
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
  readonly retry?: string;
  readonly comment?: string;
}

export interface OpenStream {
  readonly status: number;
  readonly headers: Headers;
  /** The body of a response that is not a stream (a 404's detail), as text. */
  readonly text?: string;
  /** The next message, or null when the stream has ended. */
  next(timeoutMs?: number): Promise<StreamMessage | null>;
  /** The next status event, skipping comments, the retry hint and named events (previews). */
  nextEvent(timeoutMs?: number): Promise<{ id: number; body: Record<string, unknown> } | null>;
  /** Disconnects, as a client that goes away does. */
  close(): void;
}

export async function openStream(url: string, headers: Record<string, string>): Promise<OpenStream> {
  // node:http with a connection of its own: closing the stream closes exactly that connection,
  // as a browser tab that goes away does (fetch's pool may reuse or reopen connections).
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    get(url, { headers, agent: false }, resolve).on('error', reject);
  });
  const status = response.statusCode ?? 0;
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (typeof value === 'string') responseHeaders.set(name, value);
  }
  const close = () => response.destroy();
  if (!(response.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    let text = '';
    for await (const chunk of response) text += chunk;
    return {
      status,
      headers: responseHeaders,
      text,
      next: async () => null,
      nextEvent: async () => null,
      close,
    };
  }
  response.setEncoding('utf8');
  let buffer = '';
  let done = false;
  let wake: (() => void) | undefined;
  response.on('data', (chunk: string) => {
    buffer += chunk;
    wake?.();
  });
  response.on('close', () => {
    done = true;
    wake?.();
  });
  const next = async (timeoutMs = 10_000): Promise<StreamMessage | null> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        return parseBlock(block);
      }
      if (done) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no stream message within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        };
      });
    }
  };
  return {
    status,
    headers: responseHeaders,
    next,
    async nextEvent(timeoutMs) {
      for (;;) {
        const message = await next(timeoutMs);
        if (message === null) return null;
        // Statuses only: a named event (a preview) is not one.
        if (message.data !== undefined && message.event === undefined)
          return { id: Number(message.id), body: JSON.parse(message.data) };
      }
    },
    close,
  };
}

function parseBlock(block: string): StreamMessage {
  const fields: Record<string, string> = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) fields.comment = line.slice(1).trim();
    else {
      const colon = line.indexOf(':');
      fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
    }
  }
  return fields;
}
