/**
 * Servers a benchmark runs in processes of their own, as they run in production: started with
 * tsx, ready once they print `ready` (or a first line of JSON), stopped with SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface SpawnOptions {
  /** The child's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** The line that says it is ready (default: its first line), for a program that logs first. */
  ready?: (line: string) => boolean;
}

/**
 * Starts bench/`script` (a path relative to bench/, so the product's own entry points too) and
 * answers once it printed its first line (`ready`, or what it announces), or the line `ready`
 * accepts. What it prints later is read and dropped, so a chatty server never blocks on its pipe.
 */
export async function spawnServer(
  script: string,
  args: string[],
  stdin: 'ignore' | 'pipe' = 'ignore',
  options: SpawnOptions = {},
): Promise<{ child: ChildProcess; firstLine: string }> {
  // BENCH_CPU_PROF=DIR: each server writes a V8 CPU profile there when it stops (Chrome DevTools
  // or `node bench/profile-summary.ts` read it); NODE_OPTIONS may not carry --cpu-prof.
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', path.join(here, script), ...args], {
    stdio: [stdin, 'pipe', 'inherit'],
    ...(options.env ? { env: options.env } : {}),
  });
  const isReady = options.ready ?? (() => true);
  const firstLine = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk;
      for (let end = out.indexOf('\n'); end >= 0; end = out.indexOf('\n')) {
        const line = out.slice(0, end);
        out = out.slice(end + 1);
        if (!isReady(line)) continue;
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        child.off('exit', onExit);
        resolve(line);
        return;
      }
    };
    const onExit = (code: number | null) =>
      reject(new Error(`${script} exited (${code}) before it was ready`));
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
  return { child, firstLine };
}

export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
