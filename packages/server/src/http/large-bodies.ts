import { ThreadPool } from '@imagegen/engines/threads';
import type { Metrics } from '../observability/metrics.ts';
import type { BodyRead, BodyToRead } from './body-reading-thread.ts';
import { HttpError, PreparedHttpError } from './http-errors.ts';
import type { BodyReader } from './request-bodies.ts';
import { requestSchemaOf } from './request-schemas.ts';

/**
 * JSON bodies of this many bytes or more are read and validated on a worker thread, not on the
 * event loop. Every request a client of the original service sends is far smaller (a prompt, a
 * few numbers and URLs), so they stay on the event loop, where they cost least; a body built to
 * fail in 100,000 places is large, and costs the API's event loop nothing but the hop.
 */
export const OFF_LOOP_BODY_BYTES = 16 * 1024;

/** A body the thread read and validated: the contract's validator passes it through as it is. */
export class ValidatedBody {
  constructor(readonly value: unknown) {}
}

/** Why a large body's reading was dropped: its client went away before the answer. */
class ClientGone extends Error {
  override readonly name = 'ClientGone';
}

/**
 * The reader of large JSON bodies, for the body parser (request-bodies.ts): a body of
 * OFF_LOOP_BODY_BYTES or more sent to a route with a JSON body schema is read and validated on a
 * worker thread (one: the CPU any number of large bodies can take is one core); any other body
 * is left as it arrived, at the cost of one length check. A body whose client disconnects while
 * it waits for the thread is dropped without being read; one the thread has started is finished
 * there (at most the cost of one 1 MiB body) and its answer discarded. `close` stops the thread.
 */
export function largeBodyReader(metrics: Metrics): { read: BodyReader; close(): Promise<void> } {
  const threads = new ThreadPool<BodyToRead, BodyRead>(new URL('./body-reading-thread.ts', import.meta.url));
  const read: BodyReader = (request, body) => {
    if (body.bytes.length < OFF_LOOP_BODY_BYTES) return undefined;
    const { method, url } = request.routeOptions;
    // Only a route whose body schema is the contract's own: a route without one (a cancel path)
    // keeps its body as it arrived, and the thread is never asked for a schema it does not have.
    if (url === undefined) return undefined;
    const schema = requestSchemaOf(method as string, url);
    if (schema === undefined || schema !== request.routeOptions.schema?.body) return undefined;
    const gone = new AbortController();
    let started = false;
    const socket = request.raw.socket;
    const onClose = () => gone.abort(new ClientGone('the client closed the connection'));
    socket.once('close', onClose);
    return threads
      .run(
        { method: method as string, url, bytes: body.bytes, contentType: body.contentType },
        { signal: gone.signal, onStart: () => (started = true) },
      )
      .then(
        (read) => {
          socket.off('close', onClose);
          metrics.largeBodies.inc({ outcome: 'read' });
          if (!read.ok) throw new PreparedHttpError(read.status, read.json);
          return new ValidatedBody(read.value);
        },
        (error: Error) => {
          socket.off('close', onClose);
          if (!(error instanceof ClientGone)) throw error;
          metrics.largeBodies.inc({ outcome: started ? 'abandoned' : 'dropped' });
          // Nobody reads the answer; 499 (nginx's "client closed request") names it in the log.
          throw new HttpError(499, error.message);
        },
      );
  };
  return { read, close: () => threads.close() };
}
