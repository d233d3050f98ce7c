/**
 * `npm run --silent test:comfyui-previews -- http://HOST:PORT`: checks that a real ComfyUI's
 * preview frames reach the comfyui engine as the fake's do. The server must be started with a
 * preview method (`--preview-method auto`, or `latent2rgb`); COMFYUI_CHECKPOINTS maps `sd1.5` to
 * its checkpoint file, as for the API. Draws one SD 1.5 text2image of 4 steps through the engine
 * and expects previews: at least one, each a JPEG or PNG that decodes, none after the task ended.
 * Prints what arrived; exits 1 when none did (a server without a preview method sends none).
 * Not part of `npm test`: run it on the real CPU ComfyUI (real-comfyui/previews.sh).
 */
import {
  compilerFor,
  createComfyClient,
  createComfyuiEngine,
  parseCheckpoints,
} from '@imagegen/engine-comfyui/engine';
import type { PreviewImage } from '@imagegen/engines';
import sharp from 'sharp';
import { caseJob } from './comfyui-pipeline-suite.ts';

const url = process.argv[2];
if (!url || !/^https?:\/\//.test(url)) {
  console.error(
    'usage: npm run --silent test:comfyui-previews -- http://HOST:PORT   (COMFYUI_CHECKPOINTS=sd1.5=FILE)',
  );
  process.exit(2);
}
const client = createComfyClient({ url, requestTimeoutMs: 120_000 });
const stats = await client.stats();
const engine = createComfyuiEngine({
  servers: [client],
  compilers: [compilerFor('/sd/text2image/v1')!],
  checkpoints: parseCheckpoints(process.env.COMFYUI_CHECKPOINTS),
});
const steps = 4;
const job = await caseJob({
  name: 'text2image with previews',
  pipeline: '/sd/text2image/v1',
  body: {
    prompt: 'a lighthouse at dawn',
    negative_prompt: '',
    num_inference_steps: steps,
    width: 128,
    height: 128,
  },
  images: {},
  expect: { count: 1, width: 128, height: 128 },
});
const previews: { at: number; image: PreviewImage }[] = [];
const started = performance.now();
let ended = false;
let late = 0;
try {
  const result = await engine.run(job, {
    signal: new AbortController().signal,
    progress: () => {},
    preview: (image) => {
      if (ended) late++;
      previews.push({ at: (performance.now() - started) / 1000, image });
    },
  });
  ended = true;
  console.log(
    `ComfyUI ${stats.comfyuiVersion} at ${url}: ${result.images.length} image(s) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
} finally {
  await engine.close?.();
}
for (const { at, image } of previews) {
  const { format, width, height } = await sharp(image.data).metadata();
  console.log(
    `  preview at ${at.toFixed(1)} s: ${image.contentType}, ${format} ${width} × ${height}, ${image.data.length} bytes`,
  );
}
if (previews.length === 0) {
  console.error(`no preview arrived in ${steps} steps: was the server started with --preview-method auto?`);
  process.exit(1);
}
if (late > 0) {
  console.error(`${late} preview(s) arrived after the task ended`);
  process.exit(1);
}
console.log(`${previews.length} preview(s) in ${steps} steps: the engine receives the server's previews`);
