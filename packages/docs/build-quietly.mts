/**
 * `npm start`'s first build of the documentation site (the root prestart runs this when the site
 * is not built): the build's output goes to packages/docs/build.log, the terminal gets a line
 * before and after. `npm run build:docs` prints everything, for people working on the site.
 */
import path from 'node:path';
import { buildQuietly } from './quiet-build.ts';

const root = path.resolve(import.meta.dirname, '../..');
process.exitCode = await buildQuietly({
  command: 'npm',
  args: ['run', 'build', '-w', 'packages/docs'],
  cwd: root,
  logFile: path.join(import.meta.dirname, 'build.log'),
  logName: 'packages/docs/build.log',
  write: (text) => process.stdout.write(text),
});
