import { spawn } from 'node:child_process';

/**
 * Polls each URL one GET at a time, 20 ms apart, from a process of its own (the test's process is
 * busy with the work), while `work` runs; answers each URL's answer times in ms, in order. The
 * first round, before `work` starts, is not counted: it only shows the poller is ready.
 */
export async function pollWhile(urls: readonly string[], work: () => Promise<unknown>): Promise<number[][]> {
  const poller = spawn(process.execPath, ['-e', POLLER, ...urls], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  let ready: () => void;
  const polling = new Promise<void>((resolve) => {
    ready = resolve;
  });
  poller.stdout.on('data', (chunk) => {
    output += chunk;
    if (output.includes('ready\n')) ready();
  });
  const exited = new Promise((resolve) => poller.once('exit', resolve));
  try {
    await polling;
    await work();
  } finally {
    poller.stdin.end();
    await exited;
  }
  return JSON.parse(output.slice(output.indexOf('ready\n') + 6)) as number[][];
}

/** The poller: prints `ready` after its first round, then every URL's times once stdin closes. */
const POLLER = `
const urls = process.argv.slice(1);
const times = urls.map(() => []);
let running = true;
process.stdin.on('end', () => { running = false; });
process.stdin.resume();
const poll = async (n) => {
  const start = performance.now();
  const response = await fetch(urls[n]);
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(urls[n] + ' answered ' + response.status);
  return performance.now() - start;
};
(async () => {
  for (let n = 0; n < urls.length; n++) await poll(n);
  process.stdout.write('ready\\n');
  while (running) {
    for (let n = 0; n < urls.length; n++) times[n].push(await poll(n));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.stdout.write(JSON.stringify(times));
})();
`;
