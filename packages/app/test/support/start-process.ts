/**
 * `npm start` (packages/app/src/start.ts) as a child process, for the tests of the program as
 * operators run it: its output collected, a wait for a line, and its exit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const START = path.resolve(import.meta.dirname, '../../src/start.ts');

export interface StartedProcess {
  readonly child: ChildProcess;
  /** Everything it printed so far, stdout and stderr together. */
  output(): string;
  /** Resolves once its output contains `text`; throws if it exits or `timeoutMs` passes first. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  /** Resolves with its exit code when it exits. */
  readonly exited: Promise<number | null>;
  /** SIGKILL, if it still runs (for afterAll). */
  kill(): void;
}

export function startProcess(env: NodeJS.ProcessEnv): StartedProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', START], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    async waitFor(text, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!output.includes(text)) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`no "${text}" from npm start:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    exited,
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
