import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { createOwner } from '../../src/auth/accounts.ts';
import { type Authenticator, createAuthenticator } from '../../src/auth/authenticator.ts';
import { type ApiOptions, buildApi } from '../../src/http/api-app.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';

/**
 * The API built but not listening, for tests that call it with `app.inject` (a client address of
 * their choosing), over a fresh database with one owner, alice, and no worker: what they send is
 * refused or queued, never run.
 */
export interface InjectedApi {
  readonly app: FastifyInstance;
  readonly db: TestDatabase;
  readonly authenticator: Authenticator;
  /** Alice's key (STANDARD plan). */
  readonly key: string;
  close(): Promise<void>;
}

export async function injectedApi(
  options: Partial<Pick<ApiOptions, 'authFailureLimits' | 'authClock' | 'metrics'>> = {},
): Promise<InjectedApi> {
  const db = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'imagegen-injected-'));
  const key = (await createOwner(db.pool, { name: 'alice', plan: 'STANDARD' })).apiKey;
  const authenticator = createAuthenticator(db.pool);
  const app = await buildApi({
    pool: db.pool,
    authenticator,
    store: new LocalBlobStore(path.join(dataDir, 'files')),
    publicUrl: 'http://127.0.0.1:8000',
    engines: () => [],
    ...options,
  });
  await app.ready();
  return {
    app,
    db,
    authenticator,
    key,
    async close() {
      await app.close();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * For a describe block: the injected API, built before its tests and closed after them. Read its
 * `app` and `key` inside the tests.
 */
export function useInjectedApi(options: Parameters<typeof injectedApi>[0] = {}): InjectedApi {
  let api: InjectedApi | undefined;
  beforeAll(async () => {
    api = await injectedApi(options);
  });
  afterAll(() => api?.close());
  const current = () => {
    if (!api) throw new Error('the injected API is used before its beforeAll ran');
    return api;
  };
  return {
    get app() {
      return current().app;
    },
    get db() {
      return current().db;
    },
    get authenticator() {
      return current().authenticator;
    },
    get key() {
      return current().key;
    },
    close: () => current().close(),
  };
}
