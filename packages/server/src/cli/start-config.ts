import path from 'node:path';
import type { RetentionPolicy } from '../retention/sweeper.ts';

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
  /** RETENTION_*_DAYS: how long each kind of record is kept (null: forever). */
  retention: RetentionPolicy;
  /** RETENTION_SWEEP_SECONDS, in ms: how often a worker sweeps what has expired. */
  retentionSweepMs: number;
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
    // A box's disk, not an archive: a month of images, a week of uploads (inputs of tasks that
    // have long run), a month of task history and webhook attempts, a quarter of docs analytics.
    retention: {
      outputs: days(env.RETENTION_OUTPUTS_DAYS, 30, 'RETENTION_OUTPUTS_DAYS'),
      uploads: days(env.RETENTION_UPLOADS_DAYS, 7, 'RETENTION_UPLOADS_DAYS'),
      tasks: days(env.RETENTION_TASKS_DAYS, 30, 'RETENTION_TASKS_DAYS'),
      webhookAttempts: days(env.RETENTION_WEBHOOK_ATTEMPTS_DAYS, 30, 'RETENTION_WEBHOOK_ATTEMPTS_DAYS'),
      analytics: days(env.RETENTION_ANALYTICS_DAYS, 90, 'RETENTION_ANALYTICS_DAYS'),
      usage: days(env.RETENTION_USAGE_DAYS, 400, 'RETENTION_USAGE_DAYS'),
    },
    retentionSweepMs: whole(env.RETENTION_SWEEP_SECONDS, 600, 1, 'RETENTION_SWEEP_SECONDS') * 1000,
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

/** A number of whole days; 0 keeps forever (null). */
function days(value: string | undefined, fallback: number, name: string): number | null {
  const n = value === undefined || value === '' ? fallback : Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`${name}=${value} is not a number of days: a whole number, or 0 to keep forever`);
  return n === 0 ? null : n;
}
