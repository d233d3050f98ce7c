/**
 * `npm run build`: the production build. Compiles the packages the product runs (contract, db,
 * engines and each engine-*, search, server, the docs host, and app, the program that starts the roles) to
 * JavaScript, each into its own `dist/` with the package's layout kept (`packages/app/src/start.ts`
 * becomes `packages/app/dist/src/start.js`), and copies every file that is not TypeScript (SQL
 * migrations, sample images) beside the built files, where the code finds them relative to itself.
 *
 * The built files import each other by package name; each package's `exports` sends those names to
 * `dist/` under the `imagegen-build` condition, so production runs
 * `node --conditions=imagegen-build packages/app/dist/src/start.js` and needs no TypeScript
 * loader; without the condition (npm start, tests) the names still resolve to the sources.
 *
 * The docs site is built by `npm run build:docs` (the root `build` script runs both).
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { cp, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '..');

/** What each package runs in production, relative to the package. */
const BUILT: Record<string, string[]> = {
  app: ['src'],
  contract: ['src'],
  db: ['src'],
  engines: ['src'],
  'engine-comfyui': ['src'],
  'engine-cpu': ['src'],
  'engine-sandbox': ['src'],
  search: ['src', 'migrations'],
  server: ['src'],
  docs: ['host', 'runtime-settings.ts', 'site-links.ts'],
};

async function filesUnder(dir: string): Promise<string[]> {
  if (!(await stat(dir)).isDirectory()) return [dir];
  const entries = (await readdir(dir, { recursive: true, withFileTypes: true })) as {
    name: string;
    parentPath: string;
    isFile(): boolean;
  }[];
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** `packages/NAME/rest` to `packages/NAME/dist/rest`. */
function builtPath(file: string): string {
  const [packages, name, ...rest] = path.relative(ROOT, file).split(path.sep);
  if (packages !== 'packages' || !name || !(name in BUILT) || rest[0] === 'dist') {
    throw new Error(`the build reached ${file}, outside the packages it builds`);
  }
  return path.join(ROOT, packages, name, 'dist', ...rest);
}

const sources: string[] = [];
const assets: string[] = [];
for (const [name, parts] of Object.entries(BUILT)) {
  await rm(path.join(ROOT, 'packages', name, 'dist'), { recursive: true, force: true });
  for (const part of parts) {
    for (const file of await filesUnder(path.join(ROOT, 'packages', name, part))) {
      if (file.endsWith('.d.ts')) continue;
      if (file.endsWith('.ts')) sources.push(file);
      else if (!file.endsWith('.md') && !file.endsWith('-entry.mjs')) assets.push(file);
    }
  }
}

const base = ts.getParsedCommandLineOfConfigFile(
  path.join(ROOT, 'tsconfig.base.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  },
);
if (!base) throw new Error('tsconfig.base.json is not readable');
const program = ts.createProgram(sources, {
  ...base.options,
  noEmit: false,
  // `./x.ts` in an import (static or dynamic) becomes `./x.js` in the built file.
  rewriteRelativeImportExtensions: true,
  declaration: false,
  sourceMap: false,
  rootDir: ROOT,
  outDir: undefined,
});
// Types are checked by `npm run typecheck`; each file compiles on its own (isolatedModules).
const problems = program.getSyntacticDiagnostics();
const emitted = program.emit(undefined, (file, text) => {
  const target = builtPath(file);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, text);
});
const diagnostics = [...problems, ...emitted.diagnostics];
if (diagnostics.length > 0) {
  throw new Error(
    ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => ROOT,
      getNewLine: () => '\n',
    }),
  );
}
for (const file of assets) await cp(file, builtPath(file));
// The built files are ES modules whatever their package says (the docs package, for Docusaurus,
// declares no type).
for (const name of Object.keys(BUILT)) {
  writeFileSync(path.join(ROOT, 'packages', name, 'dist', 'package.json'), '{ "type": "module" }\n');
}
console.log(`built ${sources.length} modules and ${assets.length} other files into packages/*/dist`);
