import { ThreadPool } from '@imagegen/engines/threads';
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import type { Metrics } from '../observability/metrics.ts';
import type { BodyRead, BodyToRead } from './body-reading-thread.ts';
import { HttpError, PreparedHttpError } from './http-errors.ts';
import { ReceivedBody } from './request-bodies.ts';
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
 * Reads the large JSON bodies of the routes registered on `app` from now on off the event loop
 * (one thread: the CPU any number of large bodies can take is one core). A request whose client
 * disconnects while its body waits for the thread is dropped without being read; one the thread
 * has started is finished there (at most the cost of one 1 MiB body) and its answer discarded.
 */
export function readLargeBodiesOffLoop(app: FastifyInstance, metrics: Metrics): () => Promise<void> {
  const threads = new ThreadPool<BodyToRead, BodyRead>(new URL('./body-reading-thread.ts', import.meta.url));
  const offLoop: preValidationHookHandler = (request, reply, done) => {
    const body = request.body;
    if (!(body instanceof ReceivedBody) || body.bytes.length < OFF_LOOP_BODY_BYTES) return done();
    const { method, url } = request.routeOptions;
    if (url === undefined || requestSchemaOf(method as string, url) !== request.routeOptions.schema?.body) {
      return done();
    }
    const gone = new AbortController();
    const started = false;
    const onClose = () => gone.abort(new ClientGone('the client closed the connection'));
    reply.raw.once('close', onClose);
    threads
      .run(
        { method: method as string, url, bytes: body.bytes, contentType: body.contentType },
        { signal: gone.signal },
      )
      .then(
        (read) => {
          reply.raw.off('close', onClose);
          if (!read.ok) return done(new PreparedHttpError(read.status, read.json));
          request.body = new ValidatedBody(read.value);
          done();
        },
        (error: Error) => {
          reply.raw.off('close', onClose);
          if (error instanceof ClientGone)
            metrics.largeBodies.inc({ outcome: started ? 'abandoned' : 'dropped' });
          // Nobody reads the answer; 499 (nginx's "client closed request") names it in the log.
          done(error instanceof ClientGone ? new HttpError(499, error.message) : error);
        },
      );
  };
  app.addHook('onRoute', (route) => {
    if (!route.schema?.body) return;
    const own = route.preValidation;
    route.preValidation = own === undefined ? offLoop : [offLoop, ...(Array.isArray(own) ? own : [own])];
  });
  return () => threads.close();
}
