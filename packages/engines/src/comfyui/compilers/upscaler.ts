import { encodeImage, IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  checkpointNeed,
  loadCheckpoint,
} from '../chains/model-files.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { RequestFields } from '../chains/request-fields.ts';
import { samplingFor } from '../chains/schedulers.ts';
import { UPSCALE_MODELS, upscaleWith } from '../chains/upscaling.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/upscaler/v1`: `input_image` enlarged x2 by an ESRGAN model. `deblur` stops there (what the cpu
 * engine does, on a GPU); `variation` then re-imagines detail: the enlarged picture is encoded and
 * sampled again from the prompt at part strength by the SDXL checkpoint.
 */
const PIPELINE = '/upscaler/v1';
const UPSCALER = UPSCALE_MODELS.RealESRGAN_x2plus;
const MODEL_ID = 'sdxl';

/** The variation pass: enough strength to invent texture, little enough to keep the picture. */
export const VARIATION = {
  steps: 20,
  cfg: 7,
  denoise: 0.35,
  scheduler: 'UniPCMultistepScheduler',
  negative: 'blurry, lowres, artifacts',
} as const;

const VARIATION_MODEL = checkpointNeed(MODEL_ID);

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(
      IMAGE_NODES.load,
      ['UpscaleModelLoader', 'ImageUpscaleWithModel', 'VAEEncode'],
      CHECKPOINT_DIFFUSION_NODES,
    ),
    models: [
      { folder: 'upscale_models', what: `\`${UPSCALER.file}\`` },
      { ...VARIATION_MODEL, what: `for \`type: "variation"\`: ${VARIATION_MODEL.what}` },
    ],
  },
  compile(ctx) {
    const fields = new RequestFields(PIPELINE, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    const enlarged = upscaleWith(w, loadImage(w, fields.image('input_image')), UPSCALER, UPSCALER.scale);
    if (fields.string('type') !== 'variation') {
      w.save(enlarged);
      return w.compiled();
    }
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, MODEL_ID));
    const sampled = w.sample({
      model: checkpoint.model,
      seed: ctx.seed,
      steps: VARIATION.steps,
      cfg: VARIATION.cfg,
      ...samplingFor(VARIATION.scheduler),
      ...encodePrompts(w, checkpoint.clip, fields.string('prompt'), VARIATION.negative),
      latent_image: encodeImage(w, enlarged, checkpoint.vae, 1),
      denoise: VARIATION.denoise,
    });
    w.save(w.node('VAEDecode', { samples: sampled, vae: checkpoint.vae }).out(0));
    return w.compiled();
  },
};
