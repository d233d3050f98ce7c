import { defaultEngineOrder, engineCatalog, engineEntries } from '@imagegen/engines';
import { SHIPPED_ENGINES } from './shipped-engines.ts';

// The engine catalogue on stdout: every task path with the engine that serves it by default. The
// docs `generate` script writes it to .generated/engines.json. Reads data only: no model is loaded.
const catalog = engineCatalog(await engineEntries(SHIPPED_ENGINES), defaultEngineOrder(SHIPPED_ENGINES));
process.stdout.write(`${JSON.stringify(catalog, null, 2)}\n`);
