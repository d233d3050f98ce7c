import { inTransaction, type Pool, type Queryable } from '@imagegen/db';
import { newWebhookSecret } from '../webhooks/webhook-signing.ts';
import { generateApiKey, hashApiKey, isWellFormedApiKey, keyPrefix } from './api-key.ts';
import { isPlan, type Plan } from './plans.ts';
import { endSubscriptions } from './sql/endSubscriptions.ts';
import { findOwnerByKeyHash } from './sql/findOwnerByKeyHash.ts';
import { getFirstOwner } from './sql/getFirstOwner.ts';
import { insertApiKey } from './sql/insertApiKey.ts';
import { insertOwner, type OwnerRow } from './sql/insertOwner.ts';
import { insertSubscription, type SubscriptionRow } from './sql/insertSubscription.ts';
import { lockFirstOwner } from './sql/lockFirstOwner.ts';

export interface NewOwner {
  owner: OwnerRow;
  subscription: SubscriptionRow;
  /** Shown once; only its hash is stored. */
  apiKey: string;
}

/** Creates an owner with a subscription and a first key, in one transaction. */
export async function createOwner(
  pool: Pool,
  options: { name: string; plan: Plan; podId?: string | null; apiKey?: string },
): Promise<NewOwner> {
  if (!isPlan(options.plan)) throw new Error(`unknown plan ${options.plan}`);
  return inTransaction(pool, (client) => insertOwnerWithKey(client, options));
}

/** The owner made first: the one a later start's banner names for `keys create --owner`. */
export function firstOwner(db: Queryable): Promise<{ id: string; name: string } | null> {
  return getFirstOwner(db);
}

/**
 * The first start on an empty database: a default UNLIMITED owner with a new key, or null when an
 * owner exists. Processes of a fleet starting together make one owner (a lock orders them).
 */
export async function createFirstOwner(pool: Pool): Promise<NewOwner | null> {
  return inTransaction(pool, async (client) =>
    (await lockFirstOwner(client))
      ? null
      : insertOwnerWithKey(client, { name: 'default', plan: 'UNLIMITED' }),
  );
}

async function insertOwnerWithKey(
  client: Queryable,
  options: { name: string; plan: Plan; podId?: string | null; apiKey?: string },
): Promise<NewOwner> {
  const apiKey = options.apiKey ?? generateApiKey();
  const owner = await insertOwner(client, { name: options.name, webhookSecret: newWebhookSecret() });
  const subscription = await insertSubscription(client, {
    ownerId: owner.id,
    plan: options.plan,
    podId: options.podId ?? null,
    periodEnd: null,
  });
  await insertApiKey(client, { ownerId: owner.id, keyHash: hashApiKey(apiKey), prefix: keyPrefix(apiKey) });
  return { owner, subscription, apiKey };
}

export async function createApiKey(db: Queryable, ownerId: string): Promise<string> {
  const apiKey = generateApiKey();
  await insertApiKey(db, { ownerId, keyHash: hashApiKey(apiKey), prefix: keyPrefix(apiKey) });
  return apiKey;
}

/** Replaces the owner's active subscription with a new one on `plan`. */
export async function setSubscription(
  pool: Pool,
  options: { ownerId: string; plan: Plan; podId?: string | null; periodEnd?: Date | null },
): Promise<SubscriptionRow> {
  if (!isPlan(options.plan)) throw new Error(`unknown plan ${options.plan}`);
  return inTransaction(pool, async (client) => {
    await endSubscriptions(client, options.ownerId);
    return insertSubscription(client, {
      ownerId: options.ownerId,
      plan: options.plan,
      podId: options.podId ?? null,
      periodEnd: options.periodEnd ?? null,
    });
  });
}

/**
 * Makes sure `apiKey` (IMAGEGEN_API_KEY) works: if no owner holds it yet, a default owner on the
 * UNLIMITED plan is created for it. Returns whether this call created it; safe to call from
 * several processes at once.
 */
export async function ensureApiKey(pool: Pool, apiKey: string): Promise<boolean> {
  if (!isWellFormedApiKey(apiKey) && apiKey.length < 16) {
    throw new Error(
      'IMAGEGEN_API_KEY is too short: use at least 16 characters (or `npm run cli -- keys create`)',
    );
  }
  if (await findOwnerByKeyHash(pool, hashApiKey(apiKey))) return false;
  try {
    await createOwner(pool, { name: 'default', plan: 'UNLIMITED', apiKey });
    return true;
  } catch (error) {
    // Processes of a fleet start together with the same key: one creates its owner, the others'
    // inserts meet the unique key hash and roll back (owner included); the key works for all.
    if (
      (error as { code?: string }).code === UNIQUE_VIOLATION &&
      (await findOwnerByKeyHash(pool, hashApiKey(apiKey)))
    )
      return false;
    throw error;
  }
}

/** PostgreSQL's SQLSTATE for a unique constraint violation. */
const UNIQUE_VIOLATION = '23505';
