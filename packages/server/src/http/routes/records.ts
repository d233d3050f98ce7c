import type { Endpoint } from '@imagegen/contract';
import { isUuid, type Pool } from '@imagegen/db';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentSubscription } from '../../auth/sql/currentSubscription.ts';
import { getOwner } from '../../auth/sql/getOwner.ts';
import { listSubscriptions } from '../../auth/sql/listSubscriptions.ts';
import {
  toImageInfo,
  toUserAccount,
  toUserImage,
  toUserModel,
  toUserModelInfo,
  toUserSubscription,
} from '../../records/record-shapes.ts';
import { getImage } from '../../records/sql/getImage.ts';
import { listImages } from '../../records/sql/listImages.ts';
import {
  getModel,
  InvalidCursorError,
  listBatch,
  listModels,
  listTasks,
  type TaskRecord,
  taskStatusBody,
} from '../../tasks/index.ts';
import { UsageQueryError, usageReport } from '../../usage/usage-report.ts';
import { ownerDeliveries, redeliver } from '../../webhooks/deliveries.ts';
import type { RedeliveryLimits } from '../../webhooks/redelivery-limits.ts';
import { callerOf, requestKey } from '../api-key-auth.ts';
import { routeSchema } from '../contract-validation.ts';
import { HttpError } from '../http-errors.ts';
import { fastifyPath } from './fastify-path.ts';

type RecordHandler = (request: FastifyRequest, ownerId: string, reply: FastifyReply) => Promise<unknown>;

/** How many subscriptions `/user/{user_id}/subscriptions` lists at most (an operator makes them). */
const SUBSCRIPTIONS_LISTED = 100;

interface RecordOptions {
  readonly pool: Pool;
  /** How often an owner may redeliver a webhook (default DEFAULT_REDELIVERY_LIMITS). */
  readonly redeliveryLimits?: RedeliveryLimits;
  readonly publicUrl: string;
  /** The engines whose output is labelled placeholders (the task list says so of their tasks). */
  readonly placeholderEngines: ReadonlySet<string>;
}

/**
 * The owner's records, by the contract's path: reads, and the one write of a record (a webhook
 * redelivery). Every statement filters on the caller's owner id, so another owner's id answers
 * 404 exactly like a missing one.
 */
function recordHandlers({
  pool,
  publicUrl,
  placeholderEngines,
  redeliveryLimits,
}: RecordOptions): Record<string, RecordHandler> {
  const param = (request: FastifyRequest, name: string) =>
    (request.params as Record<string, string>)[name] ?? '';
  /**
   * The account paths of the original's frontend name the account: the caller's own, or none. An
   * owner id is a uuid, which a path may write in either case.
   */
  const ownAccount = (request: FastifyRequest, ownerId: string) => {
    if (param(request, 'user_id').toLowerCase() !== ownerId) throw new HttpError(404, 'User not found');
  };
  const handlers: Record<string, RecordHandler> = {
    '/models/v1': async (_request, ownerId) => (await listModels(pool, ownerId)).map(toUserModelInfo),
    '/models/v1/{model_id}': async (request, ownerId) => {
      const model = await getModel(pool, ownerId, param(request, 'model_id'));
      if (!model) throw new HttpError(404, 'Model not found');
      return toUserModel(model);
    },
    '/images/v1': async (request, ownerId) => {
      // The contract's query schema bounded `limit` and filled its default (/user/{user_id}/images too).
      const query = request.query as { limit: number; before?: string };
      // A cursor that is not an image id names no image: the listing starts from the newest.
      const before = query.before && isUuid(query.before) ? query.before : null;
      return (await listImages(pool, ownerId, { limit: query.limit, before })).map(toUserImage);
    },
    '/images/v1/{image_id}': async (request, ownerId) => {
      const id = param(request, 'image_id');
      const image = isUuid(id) ? await getImage(pool, ownerId, id) : null;
      if (!image) throw new HttpError(404, 'Image not found');
      return toImageInfo(image);
    },
    '/subscription/v1': async (_request, ownerId) => {
      const subscription = await currentSubscription(pool, ownerId);
      if (!subscription) throw new HttpError(404, 'No subscription on this account');
      return toUserSubscription(subscription);
    },
    '/user/{user_id}': async (request, ownerId, reply) => {
      ownAccount(request, ownerId);
      const subscription = await currentSubscription(pool, ownerId);
      // The answer carries the request's key: no cache may keep it.
      reply.header('cache-control', 'no-store');
      return toUserAccount(ownerId, requestKey(request.headers) ?? '', subscription);
    },
    '/user/{user_id}/images': async (request, ownerId, reply) => {
      ownAccount(request, ownerId);
      return handlers['/images/v1']!(request, ownerId, reply);
    },
    '/user/{user_id}/models': async (request, ownerId, reply) => {
      ownAccount(request, ownerId);
      return handlers['/models/v1']!(request, ownerId, reply);
    },
    '/user/{user_id}/subscriptions': async (request, ownerId) => {
      ownAccount(request, ownerId);
      return (await listSubscriptions(pool, ownerId, SUBSCRIPTIONS_LISTED)).map(toUserSubscription);
    },
    '/batches/v1/{batch_id}': async (request, ownerId) => {
      const batchId = param(request, 'batch_id');
      const tasks = await listBatch(pool, ownerId, batchId);
      if (tasks.length === 0) throw new HttpError(404, 'Batch not found');
      return { batch_id: batchId, tasks: tasks.map((task) => batchEntry(task, publicUrl)) };
    },
    '/tasks/v1': async (request, ownerId) => {
      // The contract's query schema checked `status` and `pipeline` and bounded `limit`.
      const query = request.query as {
        status?: string;
        pipeline?: string;
        batch_id?: string;
        limit: number;
        cursor?: string;
      };
      try {
        return await listTasks(pool, ownerId, {
          limit: query.limit,
          placeholderEngines,
          ...(query.status === undefined ? {} : { status: query.status }),
          ...(query.pipeline === undefined ? {} : { pipeline: query.pipeline }),
          ...(query.batch_id === undefined ? {} : { batchId: query.batch_id }),
          ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
        });
      } catch (error) {
        if (!(error instanceof InvalidCursorError)) throw error;
        throw new HttpError(422, [
          { loc: ['query', 'cursor'], msg: error.message, type: 'value_error.cursor' },
        ]);
      }
    },
    '/webhook_secret/v1': async (_request, ownerId) => {
      const owner = await getOwner(pool, ownerId);
      if (!owner) throw new HttpError(404, 'Owner not found');
      return { secret: owner.webhook_secret };
    },
    '/webhooks/v1/deliveries': async (request, ownerId) => {
      // The contract's query schema bounded `limit` and filled its default.
      const query = request.query as { task_id?: string; limit: number; cursor?: string };
      try {
        return await ownerDeliveries(pool, {
          ownerId,
          limit: query.limit,
          ...(query.task_id === undefined ? {} : { taskId: query.task_id }),
          ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
        });
      } catch (error) {
        if (!(error instanceof InvalidCursorError)) throw error;
        throw new HttpError(422, [
          { loc: ['query', 'cursor'], msg: error.message, type: 'value_error.cursor' },
        ]);
      }
    },
    '/webhooks/v1/deliveries/{delivery_id}/redeliver': async (request, ownerId) => {
      const outcome = await redeliver(pool, {
        ownerId,
        id: param(request, 'delivery_id'),
        ...(redeliveryLimits ? { limits: redeliveryLimits } : {}),
      });
      if (!('kind' in outcome)) return outcome;
      switch (outcome.kind) {
        case 'missing':
          throw new HttpError(404, 'Delivery not found');
        case 'pending':
          throw new HttpError(409, 'The delivery is still pending: its next attempt is already planned');
        case 'limited': {
          const seconds = outcome.retryAfterSeconds;
          const detail =
            outcome.scope === 'delivery'
              ? `This delivery was redelivered as often as a day allows: retry after ${seconds} s`
              : `Too many redeliveries in the last minute: retry after ${seconds} s`;
          throw new HttpError(429, detail, { 'retry-after': String(seconds) });
        }
      }
    },
    '/usage/v1': async (request, ownerId) => {
      const query = request.query as { from?: string; to?: string };
      try {
        return await usageReport(pool, {
          ownerId,
          ...(query.from === undefined ? {} : { from: query.from }),
          ...(query.to === undefined ? {} : { to: query.to }),
        });
      } catch (error) {
        if (error instanceof UsageQueryError) throw new HttpError(422, error.detail);
        throw error;
      }
    },
  };
  return handlers;
}

/** A batch lists every kind of task in the generation vocabulary (PENDING, SUCCESS, FAILURE). */
function batchEntry(task: TaskRecord, publicUrl: string) {
  const body = taskStatusBody(task, publicUrl);
  const status = task.state === 'succeeded' ? 'SUCCESS' : task.state === 'failed' ? 'FAILURE' : 'PENDING';
  return {
    id: task.id,
    path: task.endpoint,
    status,
    ...(Array.isArray(body.download_urls) || body.download_urls === null
      ? { download_urls: body.download_urls as string[] | null }
      : {}),
    ...(task.error && status === 'FAILURE' ? { error: task.error } : {}),
    created_at: task.createdAt.toISOString(),
  };
}

export function registerRecordEndpoint(
  app: FastifyInstance,
  endpoint: Endpoint,
  options: RecordOptions,
): void {
  const handler = recordHandlers(options)[endpoint.path];
  // The contract is the list of routes: a new record endpoint without a handler must not go unnoticed.
  if (!handler) throw new Error(`no record handler for ${endpoint.method} ${endpoint.path}`);
  // Its aliases (the forms the original service's frontend reads) answer exactly as it does.
  for (const path of [endpoint.path, ...(endpoint.aliases ?? []).map((alias) => alias.path)]) {
    app.route({
      method: endpoint.method,
      url: fastifyPath(path),
      schema: routeSchema(endpoint),
      handler: (request, reply) => handler(request, callerOf(request).ownerId, reply),
    });
  }
}
