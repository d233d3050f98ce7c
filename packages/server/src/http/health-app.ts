import Fastify, { type FastifyInstance } from 'fastify';
import { type Readiness, registerHealthRoutes } from './routes/health.ts';

/**
 * The health endpoints alone, for a process without the API (a worker, the webhook dispatcher,
 * the docs host): an orchestrator probes it on HEALTH_PORT as it probes an API process on its own
 * port.
 */
export function buildHealthApp(readiness: Readiness): FastifyInstance {
  const app = Fastify({ logger: false });
  registerHealthRoutes(app, readiness);
  return app;
}
