import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.ts';

/**
 * Whether a scrape may read the metrics: always without METRICS_TOKEN (operators keep /metrics
 * off the public network), else only with `Authorization: Bearer <token>`.
 */
function mayScrape(metrics: Metrics, authorization: string | undefined): boolean {
  if (metrics.token === undefined) return true;
  const given = Buffer.from(authorization ?? '');
  const expected = Buffer.from(`Bearer ${metrics.token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const REFUSED = JSON.stringify({ detail: 'Not authenticated' });

/** Serves GET /metrics on a Fastify server (the API, a role's health listener). */
export function mountMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.get('/metrics', async (request, reply) => {
    if (!mayScrape(metrics, request.headers.authorization)) {
      return reply.code(401).header('www-authenticate', 'Bearer').type('application/json').send(REFUSED);
    }
    return reply.type(metrics.contentType).send(await metrics.render());
  });
}

/**
 * Serves GET /metrics on a node:http server: a handler that answers true when it took the request
 * (the docs host mounts its handlers this way).
 */
export function metricsHandler(
  metrics: Metrics,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  return async (req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') return false;
    if (!mayScrape(metrics, req.headers.authorization)) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end(REFUSED);
      return true;
    }
    const text = await metrics.render();
    res.writeHead(200, { 'content-type': metrics.contentType }).end(text);
    return true;
  };
}
