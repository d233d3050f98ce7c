/**
 * Where a process's CPU went, from a V8 CPU profile (`BENCH_CPU_PROF=DIR npm run --silent bench --
 * api` writes one per server it starts): self time by source file and by function, heaviest
 * first; and by step of an API request: each sample goes to the innermost frame of its stack
 * that belongs to a step (STEPS below), so a native write counts for the answer that made it.
 * With `--between START END` (seconds from the profile's start), only that window.
 *
 *   node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top 40] [--between 10 18]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [file, ...rest] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [--top N] [--between START END]');
const option = (name: string, count = 1) => {
  const at = rest.indexOf(name);
  return at < 0 ? undefined : rest.slice(at + 1, at + 1 + count).map(Number);
};
const top = option('--top')?.[0] ?? 40;
const window = option('--between', 2);

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

/** The steps of an API request, by the source files that do them (first match wins). */
const STEPS: [string, RegExp][] = [
  [
    'body reading',
    /content-type-parser|request-bod|json-body|json-bytes|number-literals|_http_incoming|streams\/readable/,
  ],
  [
    'validation',
    /contract\/src\/(validate|coercion|long-lists|pydantic|python)|ajv\/|contract-validation|fastify\/lib\/validation/,
  ],
  ['auth', /server\/src\/auth\/|api-key-auth|token-buckets/],
  ['idempotency', /idempoten/],
  ['routing', /find-my-way|lenient-path|slash-redirects|fastify\/lib\/route/],
  ['metrics', /prom-client|http-observer|observability\/metrics/],
  ['logging', /pino|request-log/],
  ['request id', /request-id|crypto\/random/],
  [
    'database (pg client, SQL operations)',
    /node_modules\/pg|pg-pool|pg-protocol|\/sql\/|stored-text|submit-batch|group-commit/,
  ],
  ['handler (tasks, status)', /server\/src\/(tasks|http\/routes)\//],
  [
    'answer (serialise, write)',
    /fastify\/lib\/reply|_http_outgoing|_http_server|streams\/writable|stream_base_commons|net\.js|node:net/,
  ],
  ['fastify hooks', /fastify\//],
];
const GC = '(garbage collector)';

/** The step a sample belongs to: its stack's innermost frame in a step, else `other`. */
function stepOf(id: number): string {
  for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
    const { url, functionName } = byId.get(at)!.callFrame;
    if (functionName === GC) return 'garbage collection';
    for (const [step, pattern] of STEPS) if (pattern.test(url)) return step;
  }
  return 'other (event loop, timers, promises)';
}
const steps = new Map<string, number>();

/** A source file's name from the repository or node_modules on, or V8's own label. */
function where(url: string): string {
  if (!url) return '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const packages = url.indexOf('/packages/');
  return packages >= 0 ? url.slice(packages + 1) : url.replace(/^file:\/\//, '');
}

const files = new Map<string, number>();
const functions = new Map<string, number>();
let total = 0;
let at = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const delta = profile.timeDeltas[i] ?? 0;
  at += delta;
  const seconds = at / 1e6;
  if (window && (seconds < window[0]! || seconds > window[1]!)) continue;
  const node = byId.get(profile.samples[i]!)!;
  const { functionName, url, lineNumber } = node.callFrame;
  if (functionName === '(idle)') continue;
  total += delta;
  const source = where(url);
  files.set(source, (files.get(source) ?? 0) + delta);
  const name = `${functionName || '(anonymous)'} ${source}:${lineNumber + 1}`;
  functions.set(name, (functions.get(name) ?? 0) + delta);
  const step = stepOf(node.id);
  steps.set(step, (steps.get(step) ?? 0) + delta);
}

const print = (title: string, table: Map<string, number>) => {
  console.log(`\n${title} (share of ${(total / 1e6).toFixed(2)} s busy)`);
  for (const [name, micros] of [...table].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * micros) / total).toFixed(1).padStart(5)}%  ${name}`);
  }
};
print('by step of a request', steps);
print('self time by file', files);
print('self time by function', functions);
