import type { Queryable } from '@imagegen/db';
import { hashApiKey } from './api-key.ts';
import { isEnterprisePlan } from './plans.ts';
import { findOwnerByKeyHash } from './sql/findOwnerByKeyHash.ts';

/** Who is calling: the key's owner and their current plan. */
export interface Caller {
  readonly ownerId: string;
  readonly name: string;
  /** null without an active subscription. */
  readonly plan: string | null;
  readonly enterprise: boolean;
}

export interface Authenticator {
  /** The caller for a presented key, or null for an unknown or revoked key. */
  authenticate(apiKey: string): Promise<Caller | null>;
  /** The cached caller for a key, without a lookup: the hot path of a busy client. */
  cached(apiKey: string): Caller | undefined;
  /** Forgets cached keys (after a revocation in this process). */
  clear(): void;
}

/**
 * Looks keys up by their sha256. Known keys are cached for `ttlMs` (default 5 s), so a busy client
 * costs one lookup per few seconds instead of one per request; a revoked key stops working within
 * that time. Unknown keys are never cached, so a key created a moment ago works at once.
 */
export function createAuthenticator(
  db: Queryable,
  options: { ttlMs?: number; maxEntries?: number } = {},
): Authenticator {
  const ttlMs = options.ttlMs ?? 5_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const cache = new Map<string, { caller: Caller; expires: number }>();
  return {
    cached(apiKey) {
      const hit = cache.get(apiKey);
      return hit && hit.expires > Date.now() ? hit.caller : undefined;
    },
    async authenticate(apiKey) {
      const now = Date.now();
      const hit = cache.get(apiKey);
      if (hit && hit.expires > now) return hit.caller;
      const row = await findOwnerByKeyHash(db, hashApiKey(apiKey));
      if (!row) {
        cache.delete(apiKey);
        return null;
      }
      const caller: Caller = {
        ownerId: row.owner_id,
        name: row.name,
        plan: row.plan,
        enterprise: row.plan !== null && isEnterprisePlan(row.plan),
      };
      if (cache.size >= maxEntries) cache.clear();
      cache.set(apiKey, { caller, expires: now + ttlMs });
      return caller;
    },
    clear() {
      cache.clear();
    },
  };
}
