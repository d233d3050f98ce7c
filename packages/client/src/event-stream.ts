/**
 * A Server-Sent Events reader over a fetch body, as the HTML standard parses `text/event-stream`:
 * lines end with CRLF, LF or CR; `data` lines join with newlines; `id` and `retry` carry over;
 * lines starting with `:` are comments (the API's keep-alives). Fetch-based rather than
 * EventSource, which cannot send the API-Key header and is missing in Node.
 */

export interface ServerSentEvent {
  readonly event: string;
  readonly data: string;
  /** The last `id` the stream set (it carries over to the events after it). */
  readonly id: string | undefined;
}

export interface StreamReading {
  /** Called with every `retry` the stream sends: the reconnection delay it asks for, in ms. */
  readonly onRetry?: (ms: number) => void;
  /** Called with every chunk that arrives, comments included (the stream is alive). */
  readonly onActivity?: () => void;
}

export async function* readEventStream(
  body: ReadableStream<Uint8Array>,
  reading: StreamReading = {},
): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let lastId: string | undefined;
  let data: string[] = [];
  let event = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      reading.onActivity?.();
      buffer += decoder.decode(value, { stream: true });
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        // A CR at the end of the buffer may be the first half of a CRLF: wait for the next chunk.
        if (end < 0 || (end === buffer.length - 1 && buffer[end] === '\r')) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id: lastId };
          data = [];
          event = '';
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(text);
        else if (field === 'event') event = text;
        else if (field === 'id' && !text.includes('\0')) lastId = text;
        else if (field === 'retry' && /^\d+$/.test(text)) reading.onRetry?.(Number(text));
      }
    }
  } finally {
    // Stops the download when the caller leaves early (the task ended, or it was aborted).
    await reader.cancel().catch(() => {});
  }
}
