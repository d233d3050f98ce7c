import { buildOpenApi } from '@imagegen/contract';
import { defaultEngineOrder, servedEngineNotes } from '@imagegen/engines';
import { SHIPPED_ENGINES } from './shipped-engines.ts';

// `npm run --silent openapi`: the OpenAPI document on stdout, with the notes of the engines the
// default order serves, as a process with the default settings serves it at /openapi.json; the
// docs `generate` script writes it to .generated/openapi.json. API_URL sets the server entry.
const notes = await servedEngineNotes(SHIPPED_ENGINES, defaultEngineOrder(SHIPPED_ENGINES));
process.stdout.write(`${JSON.stringify(buildOpenApi({ serverUrl: process.env.API_URL, notes }), null, 2)}\n`);
