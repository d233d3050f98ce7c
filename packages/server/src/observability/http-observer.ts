import { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Metrics } from './metrics.ts';

/** The methods Fastify routes; anything else is counted as OTHER, so a label stays bounded. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The label of a request's route: its pattern (never the raw URL, which holds ids and keys). */
function routeLabel(request: FastifyRequest): string {
  return request.routeOptions.url ?? '(unmatched)';
}

/**
 * Records every answered request: its latency in the metrics (by method, route pattern and
 * status) and one JSON log line with the request id, route, path, status and duration. The path
 * goes without its query string, and not at all under a wildcard route (/files/<key>: a blob key
 * is the link's only secret).
 */
export function observeRequests(app: FastifyInstance, metrics: Metrics, options: { logs: boolean }): void {
  const { logs } = options;
  app.addHook('onResponse', function observeRequest(request, reply, done) {
    const route = routeLabel(request);
    const method = METHODS.has(request.method) ? request.method : 'OTHER';
    metrics.httpRequests.observe(method, route, reply.statusCode, reply.elapsedTime / 1000);
    // Without a logger (Fastify's stand-in ignores every line) the line's fields are not gathered.
    if (logs) {
      request.log.info(
        {
          method: request.method,
          route,
          ...(route.includes('*') ? {} : { path: (request.url ?? '').split('?')[0] }),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
        },
        'request',
      );
    }
    done();
  });
}

/**
 * Fastify's own request lines, less the two routine ones (incoming, completed) that
 * `observeRequests` replaces with one line per request; errors are still logged. Log lines of a
 * request carry its id as `requestId`.
 */
export class RequestLogController extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'requestId' });
  }

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) super.requestCompleted(error, request, reply);
  }
}
