/**
 * The search service alone, for production behind the docs CDN:
 *
 *   npm run serve -w @imagegen/search -- --index packages/docs/build/search-index.json --port 8100
 *   (or: tsx packages/search/src/standalone.ts --index ... --port 8100 --host 0.0.0.0)
 *
 * It answers POST /1/indexes/{index or *}/queries, POST /1/indexes/{index}/query and
 * POST /1/events; anything else is a 404. Credentials and index name from SEARCH_APP_ID,
 * SEARCH_API_KEY, SEARCH_INDEX. Insights events are stored when DATABASE_URL is set: that database
 * must hold the product's search_events table (the API's migrations create it; see
 * search-server.ts); otherwise /1/events answers 503. SIGHUP reloads the index file (after a docs
 * rebuild); SIGINT/SIGTERM stop it.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startSearchServer } from './search-server.ts';
import { searchSettingsFromEnv } from './search-settings.ts';

const { values } = parseArgs({
  options: {
    index: { type: 'string', default: 'packages/docs/build/search-index.json' },
    port: { type: 'string', default: '8100' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`search service: --port ${values.port} is not a port number`);
  process.exit(1);
}
const settings = searchSettingsFromEnv(process.env);
const server = await startSearchServer({
  // Relative to where npm was run (INIT_CWD), not to this package, which `npm run -w` runs in.
  indexFile: path.resolve(process.env.INIT_CWD ?? process.cwd(), values.index),
  port,
  host: values.host,
  settings,
  ...(process.env.DATABASE_URL ? { databaseUrl: process.env.DATABASE_URL } : {}),
}).catch((error: Error) => {
  console.error(`search service did not start: ${error.message}`);
  process.exit(1);
});
console.log(
  `search service: ${server.service.index.records.length} records, index ${settings.indexName}, ${server.url}/1/indexes/*/queries`,
);
process.on('SIGHUP', () => {
  server.reload().then(
    (count) => console.log(`search service: reloaded ${count} records`),
    (error: Error) => console.error(`search service: reload failed: ${error.message}`),
  );
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    void server.close().finally(() => process.exit(0));
  });
}
