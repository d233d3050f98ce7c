import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildQuietly } from '../quiet-build.ts';

/**
 * The first start's docs build, run on a stand-in build that writes what the real one writes to a
 * terminal: [WARNING] blocks from the bundler, then its result.
 */

const WARNING_BLOCK = [
  '[WARNING] ./node_modules/some-theme/styles.css',
  'Module Warning (from ./node_modules/postcss-loader/dist/cjs.js):',
  'Warning',
  '(12:3) autoprefixer: start value has mixed support, consider using flex-start instead',
].join('\n');

/** A build that prints `blocks` warning blocks on stderr, then `last` on stdout, and exits with `code`. */
function fakeBuild(blocks: number, last: string, code: number): string[] {
  const script =
    `for (let n = 0; n < ${blocks}; n++) console.error(${JSON.stringify(WARNING_BLOCK)});` +
    `console.log(${JSON.stringify(last)}); process.exit(${code});`;
  return ['-e', script];
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-quiet-build-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number; terminal: string; log: string }> {
  let terminal = '';
  const logFile = path.join(dir, `${args.length}-${Date.now()}.log`);
  const code = await buildQuietly({
    command: process.execPath,
    args,
    cwd: dir,
    logFile,
    logName: 'packages/docs/build.log',
    write: (text) => {
      terminal += text;
    },
  });
  return { code, terminal, log: await readFile(logFile, 'utf8') };
}

describe('the quiet docs build of the first start', () => {
  it('prints a line before and one after, no [WARNING] block; the log keeps the whole output', async () => {
    const { code, terminal, log } = await run(
      fakeBuild(40, '[SUCCESS] Generated static files in "build".', 0),
    );
    expect(code).toBe(0);
    expect(terminal).not.toContain('[WARNING]');
    expect(terminal).not.toContain('autoprefixer');
    expect(terminal.split('\n')).toEqual([
      'Building the documentation site, once (a few minutes; its output goes to packages/docs/build.log)...',
      expect.stringMatching(
        /^Documentation site built in \d+ s; 40 build warnings in packages\/docs\/build\.log\.$/,
      ),
      '',
    ]);
    expect(log.split('[WARNING]')).toHaveLength(41);
    expect(log).toContain('[SUCCESS] Generated static files');
  });

  it('shows the end of the output when the build fails, where its error is, and answers its exit code', async () => {
    const { code, terminal } = await run(fakeBuild(2, '[ERROR] Docusaurus found broken links!', 2));
    expect(code).toBe(2);
    expect(terminal).toContain('[ERROR] Docusaurus found broken links!\n');
    expect(terminal).toMatch(
      /The documentation build failed \(exit code 2\); its whole output: packages\/docs\/build\.log\n$/,
    );
  });

  it('says so when the build cannot start at all', async () => {
    let terminal = '';
    const code = await buildQuietly({
      command: path.join(dir, 'no-such-program'),
      args: [],
      cwd: dir,
      logFile: path.join(dir, 'missing.log'),
      logName: 'build.log',
      write: (text) => {
        terminal += text;
      },
    });
    expect(code).toBe(127);
    expect(terminal).toContain('ENOENT');
  });
});
