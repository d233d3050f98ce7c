/**
 * PostgreSQL, as every part of imagegen uses it: one kind of pool, one migration runner (each
 * package that owns tables passes its own folder of numbered .sql files), one LISTEN helper, the
 * encoding that lets any string be stored (`toStored`/`fromStored`, `toStoredJson` for a `jsonb` parameter), and the bundled cluster
 * `npm start` and the tests run when no DATABASE_URL is given. ARCHITECTURE.md
 * (at the repository root) says which package owns which tables.
 */
export {
  bundledClusterUrl,
  type EmbeddedCluster,
  type EmbeddedClusterOptions,
  startEmbeddedCluster,
} from './embedded-cluster.ts';
export { type Listener, listen } from './listen.ts';
export { runMigrations } from './migrate.ts';
export {
  createPool,
  inTransaction,
  type Pool,
  type PoolClient,
  type PoolOptions,
  type Queryable,
} from './pool.ts';
export { fromStored, toStored, toStoredJson } from './stored-text.ts';
export { isUuid } from './uuid.ts';
