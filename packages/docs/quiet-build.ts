import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';

export interface QuietBuildOptions {
  /** The build to run and where. */
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** Where its whole output goes. */
  readonly logFile: string;
  /** How the log file is named to the user (a path relative to where they ran npm start). */
  readonly logName: string;
  /** The terminal. */
  readonly write: (text: string) => void;
}

/** How much of a failed build's output the terminal shows: its errors come last. */
const TAIL_LINES = 60;

/**
 * Runs the docs build with its output in a log file instead of the terminal. The site's build
 * writes about 100 KB of bundler warnings (postcss on third-party CSS, none of them about this
 * site) and progress bars; a user starting the product for the first time needs none of it, only
 * that a build runs, that it ended, and, when it failed, why. Answers the build's exit code.
 */
export async function buildQuietly(options: QuietBuildOptions): Promise<number> {
  options.write(
    `Building the documentation site, once (a few minutes; its output goes to ${options.logName})...\n`,
  );
  const started = Date.now();
  const log = createWriteStream(options.logFile);
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Plain text in the log: no colour codes, no redrawn progress bars.
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', CI: '1' },
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    log.write(chunk);
    output += chunk.toString('utf8');
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const code = await new Promise<number>((resolve) => {
    child.once('error', (error) => {
      output += `${error.message}\n`;
      resolve(127);
    });
    child.once('close', (exit) => resolve(exit ?? 1));
  });
  await new Promise<void>((resolve) => log.end(resolve));
  const seconds = Math.round((Date.now() - started) / 1000);
  if (code === 0) {
    const warnings = output.split('[WARNING]').length - 1;
    const noted = warnings > 0 ? `; ${warnings} build warnings in ${options.logName}` : '';
    options.write(`Documentation site built in ${seconds} s${noted}.\n`);
    return 0;
  }
  const tail = output.trimEnd().split('\n').slice(-TAIL_LINES).join('\n');
  options.write(
    `${tail}\nThe documentation build failed (exit code ${code}); its whole output: ${options.logName}\n`,
  );
  return code;
}
