import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { comfyuiEngineModule } from '@imagegen/engine-comfyui';
import { cpuEngineModule } from '@imagegen/engine-cpu';
import { sandboxEngineModule } from '@imagegen/engine-sandbox';
import { type EngineCatalog, type EngineEntry, engineEntries } from '@imagegen/engines';

const TSX = path.resolve(import.meta.dirname, '../../../../node_modules/.bin/tsx');

/**
 * The catalogue the docs print, as the docs build gets it: from the program's own script over the
 * engines it ships (`npm run catalog -w @imagegen/app`).
 */
export async function shippedCatalog(): Promise<EngineCatalog> {
  const script = path.resolve(import.meta.dirname, '../../../app/src/print-catalog.ts');
  const { stdout } = await promisify(execFile)(TSX, [script]);
  return JSON.parse(stdout) as EngineCatalog;
}

/**
 * The shipped engines, for catalogues the program does not print (another order, an engine left
 * out): the tests check that these, in this order, give exactly the shipped catalogue.
 */
export const ENGINES: readonly EngineEntry[] = await engineEntries([
  comfyuiEngineModule,
  cpuEngineModule,
  sandboxEngineModule,
]);

export const engineNamed = (name: string) => ENGINES.find((engine) => engine.name === name);
