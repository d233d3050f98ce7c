import { INPAINT_NODES, inpaint } from '../chains/inpainting.ts';
import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  checkpointNeed,
  loadCheckpoint,
} from '../chains/model-files.ts';
import { OUTPAINT_NODES, padForOutpaint } from '../chains/outpainting.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { RequestFields, refusals } from '../chains/request-fields.ts';
import { samplingFor } from '../chains/schedulers.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/outpainting/v1`: `init_image` on a canvas grown by `expansion` pixels in each `direction`;
 * the new border is painted from the prompt by the SDXL checkpoint, blended into the old picture.
 * The answer keeps the grown canvas's size.
 */
const PIPELINE = '/outpainting/v1';
/** The request names no model: the general SDXL checkpoint paints (mappable as `sdxl`). */
const MODEL_ID = 'sdxl';
/** The request names no scheduler: the contract's default for pictures started from a picture. */
const SCHEDULER = 'UniPCMultistepScheduler';

const TILING = 'tiling large canvases is not served by this engine: the canvas is painted in one pass';

const NOT_SERVED = {
  overlap: 'the blend is ImagePadForOutpaint feathering, which this engine keeps at its default',
  horizontal_tile: TILING,
  vertical_tile: TILING,
  stretch_area: 'stretching the picture before outpainting is not served by this engine',
  stretch_scale: 'stretching the picture before outpainting is not served by this engine',
  resolution: 'the canvas is painted at its own size; a working resolution is not served by this engine',
};

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(CHECKPOINT_DIFFUSION_NODES, IMAGE_NODES.load, OUTPAINT_NODES, INPAINT_NODES),
    models: [checkpointNeed(MODEL_ID)],
    refuses: refusals(NOT_SERVED),
  },
  compile(ctx) {
    const fields = new RequestFields(PIPELINE, ctx);
    fields.refuseUnlessDefault(NOT_SERVED);
    const w = new Workflow(ctx.filenamePrefix);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, MODEL_ID));
    const conditioning = encodePrompts(w, checkpoint.clip, fields.string('prompt'), '');
    const { pixels, mask } = padForOutpaint(w, fields, loadImage(w, fields.image('init_image')));
    const { latent, ...painted } = inpaint(
      w,
      conditioning,
      checkpoint.vae,
      pixels,
      mask,
      fields.number('samples'),
    );
    const sampled = w.sample({
      model: checkpoint.model,
      seed: ctx.seed,
      steps: fields.number('num_inference_steps'),
      cfg: fields.number('guidance_scale'),
      ...samplingFor(SCHEDULER),
      ...painted,
      latent_image: latent,
      denoise: fields.number('strength'),
    });
    w.save(w.node('VAEDecode', { samples: sampled, vae: checkpoint.vae }).out(0));
    return w.compiled();
  },
};
