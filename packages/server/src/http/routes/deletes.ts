import type { Endpoint } from '@imagegen/contract';
import type { Pool } from '@imagegen/db';
import type { FastifyInstance } from 'fastify';
import { deleteOwnerModel, type ModelFileRemover, SubmitRefusedError } from '../../tasks/index.ts';
import { callerOf } from '../api-key-auth.ts';
import { routeSchema } from '../contract-validation.ts';
import { HttpError } from '../http-errors.ts';
import { fastifyPath } from './fastify-path.ts';

/** The contract's DELETE rows: one handler per path, on the caller's own records only. */
export function registerDeleteEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  options: { pool: Pool; removeModelFiles?: ModelFileRemover },
): void {
  if (endpoint.path !== '/models/v1/{model_id}') {
    throw new Error(`no delete handler for ${endpoint.method} ${endpoint.path}`);
  }
  app.delete(fastifyPath(endpoint.path), { schema: routeSchema(endpoint) }, async (request) => {
    const { model_id: modelId } = request.params as { model_id: string };
    try {
      return await deleteOwnerModel(
        options.pool,
        callerOf(request).ownerId,
        modelId,
        options.removeModelFiles,
      );
    } catch (error) {
      if (error instanceof SubmitRefusedError) throw new HttpError(error.status, error.message);
      throw error;
    }
  });
}
