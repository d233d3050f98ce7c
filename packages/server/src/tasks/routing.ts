import type { Queryable } from '@imagegen/db';
import { ENTERPRISE_PLANS, isEnterprisePlan } from '../auth/plans.ts';
import { SubmitRefusedError } from './refusal.ts';
import { getRoutingFacts } from './sql/getRoutingFacts.ts';

/** A submission the routing rules refuse (its `server_id`). */
export class RoutingError extends SubmitRefusedError {
  override readonly name = 'RoutingError';
}

export interface Route {
  targetServer: string | null;
  targetPool: string;
}

export const SHARED_POOL = 'shared';

export function ownerPool(ownerId: string): string {
  return `owner:${ownerId}`;
}

/**
 * Where a task may run, from its `server_id`: absent, the shared pool; `any`, whichever of the
 * caller's enterprise servers frees up first (the pull model load-balances); a specific id, that
 * server only. Only enterprise (EP) plans may route, and only to their own servers.
 */
export function resolveRoute(db: Queryable, ownerId: string, serverId: unknown): Route | Promise<Route> {
  // Nearly every submission: the shared pool, known without a statement (and without a promise).
  if (serverId === undefined || serverId === null || serverId === '') return SHARED_ROUTE;
  return resolveServerRoute(db, ownerId, String(serverId));
}

const SHARED_ROUTE: Route = Object.freeze({ targetServer: null, targetPool: SHARED_POOL });

async function resolveServerRoute(db: Queryable, ownerId: string, id: string): Promise<Route> {
  const facts = await getRoutingFacts(db, ownerId, id);
  if (!facts.plan || !isEnterprisePlan(facts.plan)) {
    throw new RoutingError(
      403,
      `server_id needs an enterprise plan (${ENTERPRISE_PLANS.join(', ')}); ` +
        `this account's plan is ${facts.plan ?? 'none'}. Leave server_id out to use the shared servers.`,
    );
  }
  if (id === 'any') {
    if (facts.servers === 0) {
      throw new RoutingError(409, 'server_id "any": no enterprise servers are registered for this account');
    }
    return { targetServer: null, targetPool: ownerPool(ownerId) };
  }
  if (!facts.owns_server) {
    throw new RoutingError(404, `server_id "${id}": no such server on this account`);
  }
  return { targetServer: id, targetPool: ownerPool(ownerId) };
}
