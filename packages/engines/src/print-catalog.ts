import { engineCatalog } from './catalog.ts';

// The engine catalogue on stdout; the docs `prebuild`/`prestart` scripts write it to
// .generated/engines.json. Reads data only: no model is loaded.
process.stdout.write(`${JSON.stringify(engineCatalog(), null, 2)}\n`);
