/**
 * Builds the package into dist/ (what `npm pack` ships; run by its `prepack`):
 *
 * - the SDK (`index.js`, `node.js`) as ES modules with declarations, by tsc. Its code imports
 *   nothing of the contract; its types do, so `types.d.ts` is rewritten with every type the
 *   contract's schemas give spelled out (flat-types.ts), and the declarations stand alone;
 * - the command (`cli.js`), one file bundled by esbuild with the contract's endpoint table in it
 *   (the flags of each pipeline), so an installed copy needs no other package.
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import ts from 'typescript';
import { flatTypes } from './flat-types.ts';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');

await rm(dist, { recursive: true, force: true });
const config = ts.getParsedCommandLineOfConfigFile(
  path.join(root, 'tsconfig.build.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  },
);
if (!config) throw new Error('tsconfig.build.json is not readable');
const program = ts.createProgram(config.fileNames, config.options);
const emitted = program.emit();
const problems = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
if (problems.length > 0) {
  const host = {
    getCanonicalFileName: (f: string) => f,
    getCurrentDirectory: () => root,
    getNewLine: () => '\n',
  };
  throw new Error(ts.formatDiagnostics(problems, host));
}
await writeFile(path.join(dist, 'types.d.ts'), flatTypes(path.join(root, 'src/types.ts')));
await build({
  entryPoints: [path.join(root, 'src/cli/bin.ts')],
  // Node's own modules stay imports; everything else (the contract's table, TypeBox) is inlined.
  outfile: path.join(dist, 'cli.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
});
