import { engineCatalog } from './catalog.ts';

// The engine catalogue on stdout: every task path with the engine that serves it by default. The
// docs `prebuild`/`prestart` scripts write it to .generated/engines.json. Reads data only: no
// model is loaded.
process.stdout.write(`${JSON.stringify(engineCatalog(), null, 2)}\n`);
