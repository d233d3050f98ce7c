import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiKey,
  createFirstOwner,
  createOwner,
  ensureApiKey,
  setSubscription,
} from '../../src/auth/accounts.ts';
import { generateApiKey, isWellFormedApiKey } from '../../src/auth/api-key.ts';
import { createAuthenticator } from '../../src/auth/authenticator.ts';
import { revokeApiKeys } from '../../src/auth/sql/revokeApiKeys.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

describe('accounts and API keys', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('makes keys of ig_ and 32 base62 characters, all different', () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
    for (const key of keys) expect(isWellFormedApiKey(key)).toBe(true);
  });

  it('authenticates a key to its owner and plan; an EP plan is enterprise', async () => {
    const { owner, apiKey } = await createOwner(db.pool, { name: 'acme', plan: 'EPSTANDARD' });
    const caller = await createAuthenticator(db.pool).authenticate(apiKey);
    expect(caller).toEqual({ ownerId: owner.id, name: 'acme', plan: 'EPSTANDARD', enterprise: true });
  });

  it('follows a subscription change to the new plan', async () => {
    const { owner, apiKey } = await createOwner(db.pool, { name: 'grower', plan: 'FREE' });
    await setSubscription(db.pool, { ownerId: owner.id, plan: 'SUPERCHARGE' });
    const caller = await createAuthenticator(db.pool, { ttlMs: 0 }).authenticate(apiKey);
    expect(caller?.plan).toBe('SUPERCHARGE');
    const active = await db.pool.query(
      "SELECT count(*)::int AS n FROM subscriptions WHERE owner_id = $1 AND status = 'active'",
      [owner.id],
    );
    expect(active.rows[0].n).toBe(1);
  });

  it('stops accepting a revoked key', async () => {
    const { owner } = await createOwner(db.pool, { name: 'leaky', plan: 'BASIC' });
    const second = await createApiKey(db.pool, owner.id);
    const auth = createAuthenticator(db.pool, { ttlMs: 0 });
    expect(await auth.authenticate(second)).not.toBeNull();
    await revokeApiKeys(db.pool, owner.id, second.slice(0, 7));
    expect(await auth.authenticate(second)).toBeNull();
  });

  it('honours IMAGEGEN_API_KEY: creates a default UNLIMITED owner for it once', async () => {
    const key = generateApiKey();
    expect(await ensureApiKey(db.pool, key)).toBe(true);
    expect(await ensureApiKey(db.pool, key)).toBe(false);
    const caller = await createAuthenticator(db.pool).authenticate(key);
    expect(caller).toMatchObject({ name: 'default', plan: 'UNLIMITED' });
  });

  it('lets API processes that start together with one IMAGEGEN_API_KEY all start: one creates its owner', async () => {
    const key = generateApiKey();
    // Eight open connections first, so the eight starts race instead of queueing for a connection.
    await Promise.all(Array.from({ length: 8 }, () => db.pool.query('SELECT pg_sleep(0.05)')));
    const created = await Promise.all(Array.from({ length: 8 }, () => ensureApiKey(db.pool, key)));
    expect(created.filter(Boolean)).toEqual([true]);
    // The losers' owners were rolled back with their transactions: no owner without a key.
    const keyless = await db.pool.query(
      'SELECT count(*)::int AS n FROM owners o WHERE NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.owner_id = o.id)',
    );
    expect(keyless.rows[0].n).toBe(0);
    expect(await createAuthenticator(db.pool).authenticate(key)).toMatchObject({ plan: 'UNLIMITED' });
  });

  it('refuses a too-short IMAGEGEN_API_KEY', async () => {
    await expect(ensureApiKey(db.pool, 'short')).rejects.toThrow(/too short/);
  });
});

describe('the first start on an empty database', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('makes one default owner and key when processes start together, and none later', async () => {
    await Promise.all(Array.from({ length: 8 }, () => db.pool.query('SELECT pg_sleep(0.05)')));
    const made = await Promise.all(Array.from({ length: 8 }, () => createFirstOwner(db.pool)));
    const first = made.filter((owner) => owner !== null);
    expect(first).toHaveLength(1);
    const owners = await db.pool.query('SELECT count(*)::int AS n FROM owners');
    expect(owners.rows[0].n).toBe(1);
    expect(await createAuthenticator(db.pool).authenticate(first[0]!.apiKey)).toMatchObject({
      name: 'default',
      plan: 'UNLIMITED',
    });
    expect(await createFirstOwner(db.pool)).toBeNull();
  });
});
