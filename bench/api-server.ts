/**
 * The API alone for bench/api.ts, in its own process as in production: `tsx bench/api-server.ts
 * PORT DATABASE_URL DATA_DIR`; prints `ready` once listening. No worker runs here, so the figures
 * are the API's own (the dispatch benchmark measures the worker side).
 */
import path from 'node:path';
import { createPool } from '@imagegen/db';
import { buildApiRole, createAuthenticator, LocalBlobStore } from '@imagegen/server';

const [portText, databaseUrl, dataDir] = process.argv.slice(2);
const port = Number(portText);
const pool = createPool(databaseUrl!, { max: 20, applicationName: 'bench-api' });
// Built as `npm start` builds its API, with the default settings but the port.
const { app } = await buildApiRole(
  { publicUrl: `http://127.0.0.1:${port}`, docsPort: 3000 },
  {},
  {
    pool,
    authenticator: createAuthenticator(pool),
    store: new LocalBlobStore(path.join(dataDir!, 'files')),
    engines: () => [],
    readiness: { checks: {}, stopping: false },
  },
);
await app.listen({ port, host: '127.0.0.1' });
console.log('ready');
process.on('SIGTERM', () => {
  void app.close().then(() => pool.end().then(() => process.exit(0)));
});
