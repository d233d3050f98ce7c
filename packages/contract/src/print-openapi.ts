import { buildOpenApi } from './openapi.ts';

// `npm run --silent openapi`: the document on stdout; API_URL sets the server entry.
process.stdout.write(`${JSON.stringify(buildOpenApi({ serverUrl: process.env.API_URL }), null, 2)}\n`);
