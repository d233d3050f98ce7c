import { engineEntries, engineListing } from '@imagegen/engines';
import { SHIPPED_ENGINES } from './shipped-engines.ts';

// `npm run --silent engines`: every engine of this release, the pipelines it serves and, per
// pipeline, what its servers need, as JSON on stdout. Reads data only: no model is loaded.
process.stdout.write(`${JSON.stringify(engineListing(await engineEntries(SHIPPED_ENGINES)), null, 2)}\n`);
