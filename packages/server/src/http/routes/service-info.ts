import type { EngineDescription } from '@imagegen/engines';
import type { FastifyInstance } from 'fastify';

export interface HealthSource {
  /** Every configured engine, the pipelines it serves here, and its servers' state if it has any. */
  engines(): EngineDescription[];
  /** Throws when the database is unreachable. */
  ping(): Promise<void>;
}

/** GET /health and GET /openapi.json: public, no API key. */
export function registerServiceInfoRoutes(
  app: FastifyInstance,
  options: { health: HealthSource; openApi: () => unknown },
): void {
  let document: string | undefined;
  app.get('/openapi.json', async (_request, reply) => {
    document ??= JSON.stringify(options.openApi());
    return reply.header('content-type', 'application/json; charset=utf-8').send(document);
  });

  app.get('/health', async (_request, reply) => {
    const engines = options.health.engines();
    try {
      await options.health.ping();
    } catch (error) {
      return reply
        .code(503)
        .send({ status: 'unavailable', database: `unreachable: ${(error as Error).message}`, engines });
    }
    return { status: 'ok', database: 'ok', engines };
  });
}
