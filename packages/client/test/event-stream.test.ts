import { describe, expect, it } from 'vitest';
import { readEventStream, type ServerSentEvent } from '../src/event-stream.ts';

/** The Server-Sent Events reader, on streams cut into awkward chunks. */

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function read(chunks: string[], retries: number[] = []): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of readEventStream(streamOf(chunks), { onRetry: (ms) => retries.push(ms) })) {
    events.push(event);
  }
  return events;
}

describe('readEventStream', () => {
  it('reads events with ids, skipping comments, whatever the chunking', async () => {
    const text = 'retry: 2000\n\nid: 1\ndata: {"a":1}\n\n: keep-alive\n\nid: 2\ndata: {"a":2}\n\n';
    const whole = await read([text]);
    const byByte = await read([...text]);
    expect(whole).toEqual([
      { event: 'message', data: '{"a":1}', id: '1' },
      { event: 'message', data: '{"a":2}', id: '2' },
    ]);
    expect(byByte).toEqual(whole);
  });

  it('takes CRLF and CR line ends, a CRLF split across chunks included, and joins data lines', async () => {
    const events = await read(['event: status\r', '\ndata: one\r\ndata:two\r\rdata: three\n', '\n']);
    expect(events).toEqual([
      { event: 'status', data: 'one\ntwo', id: undefined },
      { event: 'message', data: 'three', id: undefined },
    ]);
  });

  it('keeps the last id for the events after it, reports retry, and drops an unfinished event', async () => {
    const retries: number[] = [];
    const events = await read(['id: 7\nretry: 1500\ndata: a\n\ndata: b\n\ndata: cut'], retries);
    expect(events.map((event) => [event.id, event.data])).toEqual([
      ['7', 'a'],
      ['7', 'b'],
    ]);
    expect(retries).toEqual([1500]);
  });
});
