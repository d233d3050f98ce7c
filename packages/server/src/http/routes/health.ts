import type { FastifyInstance } from 'fastify';

/**
 * What a process tells a load balancer or an orchestrator: one readiness check per role it runs
 * (api, worker, webhooks, docs). A check resolves when its role can take work and throws why
 * not. `stopping` is set on SIGTERM, so the process is taken out of rotation while it drains.
 */
export interface Readiness {
  readonly checks: Readonly<Record<string, () => Promise<void>>>;
  stopping: boolean;
}

/**
 * GET /health/live (the process is up and answering: 200 until it exits) and GET /health/ready
 * (200 when every role of this process is ready, else 503 with the reason per role). Neither
 * needs an API key. `GET /health` stays the API's service summary.
 */
export function registerHealthRoutes(app: FastifyInstance, readiness: Readiness): void {
  app.get('/health/live', async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'live' }),
  );
  app.get('/health/ready', async (_request, reply) => {
    const roles: Record<string, string> = {};
    const results = await Promise.all(
      Object.entries(readiness.checks).map(async ([role, check]) => {
        try {
          if (readiness.stopping) throw new Error('shutting down');
          await check();
          roles[role] = 'ready';
          return true;
        } catch (error) {
          roles[role] = (error as Error).message;
          return false;
        }
      }),
    );
    const ready = results.every(Boolean);
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'unready', roles });
  });
}
