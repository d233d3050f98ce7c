/**
 * Servers a benchmark runs in processes of their own, as they run in production: started with
 * tsx, ready once they print `ready` (or a first line of JSON), stopped with SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Starts bench/`script` and answers once it printed its first line (`ready`, or what it announces). */
export async function spawnServer(
  script: string,
  args: string[],
  stdin: 'ignore' | 'pipe' = 'ignore',
): Promise<{ child: ChildProcess; firstLine: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, script), ...args], {
    stdio: [stdin, 'pipe', 'inherit'],
  });
  const firstLine = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk;
      const end = out.indexOf('\n');
      if (end < 0) return;
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      resolve(out.slice(0, end));
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
