/**
 * `npm run --silent test:comfyui -- http://HOST:PORT`: the comfyui engine's pipeline suite against
 * a real ComfyUI server (COMFYUI_CHECKPOINTS maps model ids to its checkpoint files, as for the
 * API). Prints per case: ran, skipped (what the server lacks) or failed (why); exits 1 when a
 * case failed. Not part of `npm test`.
 */

import { createComfyClient } from '../comfyui/client/index.ts';
import { parseCheckpoints } from '../comfyui/comfyui-settings.ts';
import { runServerSuite } from './comfyui-server-suite.ts';

const url = process.argv[2];
if (!url || !/^https?:\/\//.test(url)) {
  console.error(
    'usage: npm run --silent test:comfyui -- http://HOST:PORT   (COMFYUI_CHECKPOINTS=... to map model ids)',
  );
  process.exit(2);
}
const checkpoints = parseCheckpoints(process.env.COMFYUI_CHECKPOINTS);
const client = createComfyClient({ url, requestTimeoutMs: 120_000 });
const stats = await client.stats();
console.log(`ComfyUI ${stats.comfyuiVersion} at ${url}; checkpoints ${JSON.stringify(checkpoints)}`);

let lastProgress = 0;
const outcomes = await runServerSuite(url, {
  client,
  checkpoints,
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
