/**
 * Runs the `imagegen` command as its users do: a child process of its bin, piped, or in a pseudo
 * terminal made by util-linux's `script` (no native addon needed).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

export const BIN = path.resolve(import.meta.dirname, '../../bin/imagegen.js');

export interface CommandResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CommandOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  readonly stdin?: string;
  /** Run in a pseudo terminal: stdout and stderr are the terminal, both read back as `stdout`. */
  readonly tty?: boolean;
  /** Called with each chunk of stderr as it comes (to interrupt the command at the right time). */
  readonly onStderr?: (text: string, child: { kill(signal: NodeJS.Signals): void }) => void;
  /** The program to run instead of the repository's bin (an installed copy). */
  readonly program?: string;
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

export function imagegen(args: readonly string[], options: CommandOptions = {}): Promise<CommandResult> {
  const program = options.program ? [options.program] : [process.execPath, BIN];
  const [command, ...rest] = options.tty
    ? ['script', '-qfec', [...program, ...args].map(shellQuote).join(' '), '/dev/null']
    : [...program, ...args];
  const child = spawn(command!, rest, {
    cwd: options.cwd ?? process.cwd(),
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    options.onStderr?.(chunk.toString(), child);
  });
  child.stdin.end(options.stdin ?? '');
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
