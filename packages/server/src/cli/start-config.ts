import path from 'node:path';

/** The parts of the product one process can run (IMAGEGEN_ROLES). */
export const ROLES = ['api', 'worker', 'webhooks', 'docs'] as const;
export type Role = (typeof ROLES)[number];

export interface StartConfig {
  /** IMAGEGEN_ROLES: what this process runs; all four unless the list says otherwise. */
  roles: ReadonlySet<Role>;
  dataDir: string;
  databaseUrl: string | undefined;
  apiPort: number;
  apiHost: string;
  docsPort: number;
  /** Where a process without the API role answers /health/live and /health/ready. */
  healthPort: number;
  publicUrl: string;
  apiKey: string | undefined;
  serverId: string | undefined;
  /** Connections of the API's (and the docs host's) pool. */
  poolSize: number;
  /** Connections of the pool the worker and the webhook dispatcher share. */
  workerPoolSize: number;
  /** How long running tasks may go on after SIGTERM before they are released to the queue. */
  shutdownGraceMs: number;
}

/** The settings `npm start` reads (README's configuration table), with their defaults. */
export function readStartConfig(env: NodeJS.ProcessEnv): StartConfig {
  const apiPort = port(env.API_PORT, 8000, 'API_PORT');
  return {
    roles: roles(env.IMAGEGEN_ROLES),
    dataDir: path.resolve(env.IMAGEGEN_DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    apiPort,
    // Loopback unless asked: a fresh clone should not expose an API with a printed key to the network.
    apiHost: env.API_HOST || '127.0.0.1',
    docsPort: port(env.DOCS_PORT, 3000, 'DOCS_PORT'),
    healthPort: port(env.HEALTH_PORT, 8001, 'HEALTH_PORT'),
    // An address, not `localhost`: links the API hands out (uploads, outputs) are valid inputs of
    // any request only with a host pydantic's HttpUrl takes, and it wants a top-level domain.
    publicUrl: (env.PUBLIC_URL || `http://127.0.0.1:${apiPort}`).replace(/\/+$/, ''),
    apiKey: env.IMAGEGEN_API_KEY || undefined,
    serverId: env.IMAGEGEN_SERVER_ID || undefined,
    poolSize: whole(env.DATABASE_POOL_SIZE, 20, 1, 'DATABASE_POOL_SIZE'),
    // The worker's heartbeats, claims and LISTEN, and the dispatcher: a few connections, kept apart
    // from the API's so that a burst of polls cannot starve the heartbeats that keep a lease.
    workerPoolSize: whole(env.WORKER_POOL_SIZE, 6, 2, 'WORKER_POOL_SIZE'),
    shutdownGraceMs: whole(env.SHUTDOWN_GRACE_MS, 10_000, 0, 'SHUTDOWN_GRACE_MS'),
  };
}

function roles(value: string | undefined): ReadonlySet<Role> {
  if (value === undefined || value.trim() === '') return new Set(ROLES);
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(ROLES as readonly string[]).includes(name))
      throw new Error(`IMAGEGEN_ROLES names unknown role "${name}"; roles: ${ROLES.join(', ')}`);
  }
  return new Set(names as Role[]);
}

function port(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${name}=${value} is not a port number`);
  return n;
}

function whole(value: string | undefined, fallback: number, min: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name}=${value} is not a whole number from ${min}`);
  return n;
}
