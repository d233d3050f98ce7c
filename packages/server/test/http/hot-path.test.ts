import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPool } from '@imagegen/db';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/auth/authenticator.ts';
import { buildApiRole } from '../../src/http/api-role.ts';
import { HOT_PATH_HOOKS } from '../../src/http/hot-path.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';

/**
 * The hooks the built API runs for a submission and a status read are the budget table's
 * (hot-path.ts), no more: a new global hook fails here until it is named there, with its cost.
 */

let app: FastifyInstance;
let dir: string;
// Never connected: building the API and listing its routes reads no database.
const pool = createPool('postgres://nobody@127.0.0.1:1/none', { max: 1 });

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-hot-path-'));
  // As `npm start` builds it, with every optional route its default settings register.
  ({ app } = await buildApiRole(
    { publicUrl: 'http://127.0.0.1:8000', docsPort: 3000 },
    {},
    {
      pool,
      authenticator: createAuthenticator(pool),
      store: new LocalBlobStore(dir),
      engines: () => [],
      readiness: { checks: {}, stopping: false },
    },
  ));
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await pool.end();
  await rm(dir, { recursive: true, force: true });
});

/** The hooks of one route by stage, as Fastify prints them (`printRoutes` with its hooks). */
function hooksOf(method: string, route: string): Record<string, string[]> {
  const lines = app.printRoutes({ method, includeHooks: true, commonPrefix: false }).split('\n');
  const at = lines.findIndex((line) => line.includes(`${route} (${method})`));
  expect(at, `${method} ${route} is routed`).toBeGreaterThanOrEqual(0);
  const hooks: Record<string, string[]> = {};
  for (const line of lines.slice(at + 1)) {
    const hook = /• \((\w+)\) (\[.*\])$/.exec(line);
    if (!hook) break;
    hooks[hook[1]!] = (JSON.parse(hook[2]!) as string[]).map((name) => name.replace(/\(\)$/, ''));
  }
  return hooks;
}

describe('the hot path', () => {
  it.each([
    ['POST', '/sd/text2image/v1'],
    ['GET', '/sd/text2image/v1/status/:task_id'],
    ['POST', '/generate/v3'],
  ])('%s %s runs the hooks of the budget table and no other', (method, route) => {
    expect(hooksOf(method, route)).toEqual(HOT_PATH_HOOKS);
  });

  it.each([
    ['POST', '/v1/images/generations', 'authenticateOpenAi'],
    ['POST', '/mcp', 'authenticateMcp'],
  ])('leaves %s %s its own key hook, in a scope of its own', (method, route, hook) => {
    const hooks = hooksOf(method, route);
    expect(hooks.onRequest).toContain(hook);
    expect(hooks.onRequest).not.toContain('authenticate');
  });
});
