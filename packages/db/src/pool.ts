import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that can run a query: the pool itself or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

export interface PoolOptions {
  /** Connections kept; the API and the worker each hold their own pool. */
  max?: number;
  applicationName?: string;
}

export function createPool(url: string, options: PoolOptions = {}): Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 20,
    application_name: options.applicationName ?? 'imagegen',
    idleTimeoutMillis: 30_000,
  });
  // An idle client's connection can drop (server restart); the pool replaces it. Without this
  // listener such an error would crash the process.
  pool.on('error', () => {});
  return pool;
}

/** Runs `work` in one transaction; rolls back on any error and rethrows it. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
