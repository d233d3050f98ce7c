/**
 * `npm run --silent test:comfyui -- http://HOST:PORT [--only TEXT]...`: the comfyui engine's
 * pipeline suite against a real ComfyUI server (COMFYUI_CHECKPOINTS maps model ids to its
 * checkpoint files, as for the API). `--only` keeps the cases whose name contains TEXT (several
 * widen the choice). COMFYUI_MODELS_DIR, one path: the `models/` folder the server reads, where a
 * training stores its LoRA, then used by a text2image (default: a temporary folder, LoRA only
 * checked). COMFYUI_STALL_SECONDS, as for the API: how long a prompt may send nothing (a CPU
 * server's VAE pass at a megapixel can take longer than the default five minutes). Prints per
 * case: ran, skipped (what the server lacks) or failed (why); exits 1 when a case failed. Not part
 * of `npm test`.
 */

import { createComfyClient, parseCheckpoints, parseStallMs } from '@imagegen/engine-comfyui/engine';
import { PIPELINE_SUITE } from './comfyui-pipeline-suite.ts';
import { runServerSuite } from './comfyui-server-suite.ts';

const USAGE =
  'usage: npm run --silent test:comfyui -- http://HOST:PORT [--only TEXT]...   ' +
  '(COMFYUI_CHECKPOINTS=... to map model ids, COMFYUI_MODELS_DIR=PATH for the models folder the server reads)';

const args = process.argv.slice(2);
const url = args.shift();
const only: string[] = [];
while (args.length > 0) {
  const flag = args.shift();
  const text = args.shift();
  if (flag !== '--only' || !text) {
    console.error(USAGE);
    process.exit(2);
  }
  only.push(text);
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
const cases = PIPELINE_SUITE.filter(
  (testCase) => only.length === 0 || only.some((text) => testCase.name.includes(text)),
);
if (cases.length === 0) {
  console.error(`no case of the suite is named with ${only.map((text) => `'${text}'`).join(' or ')}`);
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
