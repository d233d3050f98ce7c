/**
 * `npm run --silent bench -- NAME [args]`: runs bench/NAME.ts (its default export). Every
 * benchmark prints its figures as one JSON object on its last line of output.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((file) => /^[a-z0-9-]+\.ts$/.test(file) && file !== 'run.ts' && !file.includes('-server'))
  .map((file) => file.slice(0, -3));

const name = process.argv[2];
if (!name || !/^[a-z0-9-]+$/.test(name) || !existsSync(path.join(here, `${name}.ts`))) {
  console.error(`usage: npm run --silent bench -- NAME\nbenchmarks: ${available.join(', ')}`);
  process.exit(2);
}
// The benchmark sees its own arguments as if run directly.
process.argv.splice(2, 1);
const module = (await import(pathToFileURL(path.join(here, `${name}.ts`)).href)) as {
  default?: () => Promise<unknown>;
};
if (typeof module.default !== 'function') {
  console.error(`bench/${name}.ts has no default export to run`);
  process.exit(2);
}
try {
  await module.default();
  process.exit(0);
} catch (error) {
  console.error(`bench ${name} failed: ${(error as Error).stack ?? error}`);
  process.exit(1);
}
