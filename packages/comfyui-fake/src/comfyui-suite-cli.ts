/**
 * `npm run --silent test:comfyui -- http://HOST:PORT [--only TEXT]... [--name NAME]...`: the
 * comfyui engine's pipeline suite against a real ComfyUI server (COMFYUI_CHECKPOINTS maps model ids
 * to its checkpoint files, as for the API). `--only` keeps the cases whose name contains TEXT,
 * `--name` the case named exactly NAME (a plain case whose name starts every variant's); several of
 * either widen the choice. COMFYUI_MODELS_DIR, one path: the `models/` folder the server reads, where a
 * training stores its LoRA, then used by a text2image (default: a temporary folder, LoRA only
 * checked). COMFYUI_STALL_SECONDS, as for the API: how long a prompt may send nothing (a CPU
 * server's VAE pass at a megapixel can take longer than the default five minutes). Prints per
 * case: ran, skipped (what the server lacks) or failed (why); exits 1 when a case failed. Not part
 * of `npm test`.
 *
 * `--validate-only`: no case runs; each graph is POSTed to `/prompt`, which validates it (node
 * classes, inputs, types, choices, model files), and taken back at once (comfyui-validation-suite.ts).
 * Prints per case: accepted (and what the server did before it was taken back), rejected (the
 * server's errors) or skipped; then the counts per pipeline; exits 1 when a graph was rejected.
 * `--every-choice` adds, per pipeline, a case with each other value of each choice field
 * (`scheduler`, `operation`…) and each bound of each number field (comfyui-validation-suite.ts's
 * choiceVariants): every sampler, scheduler, file and node bound a value reaches is shown to the server.
 */

import { createComfyClient, parseCheckpoints, parseStallMs } from '@imagegen/engine-comfyui/engine';
import { PIPELINE_SUITE } from './comfyui-pipeline-suite.ts';
import { runServerSuite } from './comfyui-server-suite.ts';
import { choiceVariants, validateSuite } from './comfyui-validation-suite.ts';

const USAGE =
  'usage: npm run --silent test:comfyui -- http://HOST:PORT [--validate-only [--every-choice]] [--only TEXT]... [--name NAME]...   ' +
  '(COMFYUI_CHECKPOINTS=... to map model ids, COMFYUI_MODELS_DIR=PATH for the models folder the server reads)';

const args = process.argv.slice(2);
const url = args.shift();
const only: string[] = [];
const names: string[] = [];
let validateOnly = false;
let everyChoice = false;
while (args.length > 0) {
  const flag = args.shift();
  if (flag === '--validate-only' || flag === '--every-choice') {
    if (flag === '--validate-only') validateOnly = true;
    else everyChoice = true;
    continue;
  }
  const text = args.shift();
  if ((flag !== '--only' && flag !== '--name') || !text) {
    console.error(USAGE);
    process.exit(2);
  }
  (flag === '--only' ? only : names).push(text);
}
if (!url || !/^https?:\/\//.test(url)) {
  console.error(USAGE);
  process.exit(2);
}
const modelsDir = process.env.COMFYUI_MODELS_DIR?.trim() || undefined;
if (modelsDir?.includes('=') || modelsDir?.includes(',')) {
  console.error('COMFYUI_MODELS_DIR: one path here, the models folder of the server under test');
  process.exit(2);
}
const chosen = (name: string): boolean =>
  (only.length === 0 && names.length === 0) ||
  only.some((text) => name.includes(text)) ||
  names.includes(name);
const cases = PIPELINE_SUITE.filter((testCase) => chosen(testCase.name));
if (cases.length === 0) {
  const asked = [...only.map((text) => `with '${text}'`), ...names.map((name) => `'${name}'`)];
  console.error(`no case of the suite is named ${asked.join(' or ')}`);
  process.exit(2);
}
const checkpoints = parseCheckpoints(process.env.COMFYUI_CHECKPOINTS);
const client = createComfyClient({
  url,
  requestTimeoutMs: 120_000,
  stallMs: parseStallMs(process.env.COMFYUI_STALL_SECONDS),
});
const stats = await client.stats();
console.log(`ComfyUI ${stats.comfyuiVersion} at ${url}; checkpoints ${JSON.stringify(checkpoints)}`);

if (everyChoice && !validateOnly) {
  console.error('--every-choice goes with --validate-only: it only validates');
  process.exit(2);
}
if (validateOnly) {
  const outcomes = await validateSuite(url, {
    client,
    checkpoints,
    cases: everyChoice ? [...cases, ...choiceVariants(cases)] : cases,
    ...(modelsDir ? { modelsDir } : {}),
    onOutcome: (outcome) => console.log(`${outcome.outcome.padEnd(8)} ${outcome.name}: ${outcome.detail}`),
  });
  const byPipeline = new Map<string, Record<string, number>>();
  for (const { pipeline, outcome } of outcomes) {
    const counts = byPipeline.get(pipeline) ?? { accepted: 0, rejected: 0, skipped: 0 };
    counts[outcome] = (counts[outcome] ?? 0) + 1;
    byPipeline.set(pipeline, counts);
  }
  console.log('');
  for (const [pipeline, counts] of byPipeline) {
    console.log(
      `${pipeline}: ${counts.accepted} accepted, ${counts.rejected} rejected, ${counts.skipped} skipped`,
    );
  }
  const total = (what: string) => outcomes.filter((outcome) => outcome.outcome === what).length;
  console.log(
    `\n${total('accepted')} accepted, ${total('rejected')} rejected, ${total('skipped')} skipped of ${outcomes.length}`,
  );
  await client.close();
  process.exit(total('rejected') > 0 ? 1 : 0);
}

let lastProgress = 0;
const outcomes = await runServerSuite(url, {
  client,
  checkpoints,
  cases,
  ...(modelsDir ? { modelsDir } : {}),
  onProgress: (name, _fraction, message) => {
    if (!message || Date.now() - lastProgress < 5_000) return;
    lastProgress = Date.now();
    console.error(`  ${name}: ${message}`);
  },
  onOutcome: (outcome) =>
    console.log(
      `${outcome.outcome.padEnd(8)} ${outcome.name}: ${outcome.detail} (${outcome.seconds.toFixed(1)} s)`,
    ),
});
const count = (what: string) => outcomes.filter((outcome) => outcome.outcome === what).length;
console.log(
  `\n${count('ran')} ran, ${count('skipped')} skipped, ${count('failed')} failed of ${outcomes.length}`,
);
process.exit(count('failed') > 0 ? 1 : 0);
