/**
 * A loopback proxy in front of the API that loses connections on purpose, as a flaky network
 * does: it can forward a request and then drop the connection before the answer reaches the
 * client (the API did the work, the client never heard), or cut a status stream after its first
 * event. Every request it sees is recorded.
 */
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
}

type Match = (request: SeenRequest) => boolean;

export interface FaultyProxy {
  readonly url: string;
  readonly seen: SeenRequest[];
  /** The next matching request reaches the API, whose answer is then thrown away with the connection. */
  dropNextAnswer(match: Match): void;
  /** The next matching stream is cut once its first event has passed. */
  cutNextStreamAfterFirstEvent(match: Match): void;
  close(): Promise<void>;
}

export async function startFaultyProxy(target: string): Promise<FaultyProxy> {
  const upstream = new URL(target);
  const seen: SeenRequest[] = [];
  const drops: Match[] = [];
  const cuts: Match[] = [];
  const take = (rules: Match[], request: SeenRequest) => {
    const index = rules.findIndex((rule) => rule(request));
    return index >= 0 && rules.splice(index, 1).length > 0;
  };

  const server = createServer((incoming, outgoing) => {
    const request = { method: incoming.method ?? 'GET', url: incoming.url ?? '/', headers: incoming.headers };
    seen.push(request);
    const drop = take(drops, request);
    const cut = take(cuts, request);
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: { ...incoming.headers, host: upstream.host },
      },
      (answer) => {
        if (drop) {
          // The API answered; the client will never know.
          answer.resume();
          answer.on('end', () => incoming.socket.destroy());
          return;
        }
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        let text = '';
        answer.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (cut && /\ndata:[^\n]*\n\n/.test(text)) {
            // The event reaches the client, then the connection dies.
            answer.destroy();
            outgoing.write(chunk, () => incoming.socket.destroy());
          } else outgoing.write(chunk);
        });
        answer.on('end', () => outgoing.end());
      },
    );
    forward.on('error', () => incoming.socket.destroy());
    incoming.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    dropNextAnswer: (match) => drops.push(match),
    cutNextStreamAfterFirstEvent: (match) => cuts.push(match),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
