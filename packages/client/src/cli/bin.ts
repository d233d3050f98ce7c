import { main } from './main.ts';

/**
 * The `imagegen` process: real streams, the environment, Ctrl-C. A first Ctrl-C aborts the
 * command (a running task is cancelled); a second one exits at once.
 */
const interrupt = new AbortController();
process.on('SIGINT', () => {
  if (interrupt.signal.aborted) process.exit(130);
  interrupt.abort(new DOMException('interrupted', 'AbortError'));
});

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  // Opened only when a command reads it (webhook verify): an idle stdin would hold the process open.
  stdin: { [Symbol.asyncIterator]: () => process.stdin[Symbol.asyncIterator]() },
  env: process.env,
  cwd: process.cwd(),
  interrupted: interrupt.signal,
});
