/**
 * The search service alone, for production behind the docs CDN:
 *
 *   tsx packages/server/src/search/standalone.ts --index packages/docs/build/search-index.json --port 8100
 *
 * Credentials and index name from SEARCH_APP_ID, SEARCH_API_KEY, SEARCH_INDEX. Insights events
 * are stored when DATABASE_URL is set (migrations applied at start); otherwise /1/events answers 503.
 * SIGHUP reloads the index file (after a docs rebuild); SIGINT/SIGTERM stop it.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { migrate } from '../db/migrate.ts';
import { createPool, type Pool } from '../db/pool.ts';
import {
  createInsightsStore,
  createSearchService,
  loadSearchIndexFile,
  searchSettingsFromEnv,
} from './index.ts';

const { values } = parseArgs({
  options: {
    index: { type: 'string', default: 'packages/docs/build/search-index.json' },
    port: { type: 'string', default: '8100' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});

const settings = searchSettingsFromEnv(process.env);
const file = await loadSearchIndexFile(values.index);
let pool: Pool | undefined;
if (process.env.DATABASE_URL) {
  pool = createPool(process.env.DATABASE_URL, { max: 4, applicationName: 'imagegen-search' });
  await migrate(pool);
}
const service = createSearchService({
  records: file.records,
  ...settings,
  ...(pool ? { insights: createInsightsStore(pool) } : {}),
});
const server = createServer((req, res) => {
  if (!service.handle(req, res)) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not found","status":404}');
  }
});
server.listen(Number(values.port), values.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : values.port;
  console.log(
    `search service: ${file.records.length} records, index ${settings.indexName}, http://${values.host}:${port}/1/indexes/*/queries`,
  );
});
process.on('SIGHUP', () => {
  loadSearchIndexFile(values.index).then(
    (next) => {
      service.replaceRecords(next.records);
      console.log(`search service: reloaded ${next.records.length} records`);
    },
    (error: Error) => console.error(`search service: reload failed: ${error.message}`),
  );
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    if (pool) void pool.end().finally(() => process.exit(0));
    else process.exit(0);
  });
}
