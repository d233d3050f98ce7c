import { engineListing } from './catalog.ts';

// `npm run --silent engines`: every engine of this release, the pipelines it serves and, per
// pipeline, what its servers need, as JSON on stdout. Reads data only: no model is loaded.
process.stdout.write(`${JSON.stringify(engineListing(), null, 2)}\n`);
