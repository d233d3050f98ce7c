import { INPAINT_NODES, inpaint } from '../chains/inpainting.ts';
import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  loadCheckpoint,
  roleNeed,
} from '../chains/model-files.ts';
import { OUTPAINT_NODES, padForOutpaint } from '../chains/outpainting.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import { samplingFor } from '../chains/schedulers.ts';
import type { PipelineCompiler } from '../contracts.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/outpainting/v1`: `init_image` on a canvas grown by `expansion` pixels in each `direction`;
 * the new border is painted from the prompt by the SDXL checkpoint, blended into the old picture.
 * As ComfyUI's outpainting example (inpaint/inpain_model_outpainting.png): ImagePadForOutpaint,
 * then inpainting of its mask. SDXL draws well only near its own area, so the grown canvas is
 * sampled at `resolution` squared pixels in its own proportions (a 512 px photo grown by 64 px
 * would otherwise be sampled at 576 x 512, a quarter of SDXL's megapixel), and the painting is
 * laid over the grown canvas at exactly its size through the same mask: the old picture stays
 * pixel for pixel, the answer is exactly the grown canvas.
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
};

/** ImageScaleToTotalPixels counts a megapixel as 1024 x 1024 and takes at least 0.01 of one. */
const MEGAPIXEL = 1024 * 1024;
const FEWEST_MEGAPIXELS = 0.01;

/** The working area of `resolution` (a square's side) in ImageScaleToTotalPixels' megapixels. */
export function workingMegapixels(resolution: number): number {
  return Math.max(FEWEST_MEGAPIXELS, Number(((resolution * resolution) / MEGAPIXEL).toFixed(4)));
}

const WORKING_SIZE_NODES: readonly NodeClass[] = [
  'ImageScaleToTotalPixels',
  'RepeatImageBatch',
  'ImageCompositeMasked',
];

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(
      CHECKPOINT_DIFFUSION_NODES,
      IMAGE_NODES.load,
      OUTPAINT_NODES,
      INPAINT_NODES,
      WORKING_SIZE_NODES,
    ),
    models: [roleNeed(MODEL_ID, 'inpainting')],
    refuses: refusals(NOT_SERVED),
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    fields.refuseUnlessDefault(NOT_SERVED);
    const w = new Workflow(ctx.filenamePrefix);
    // SDXL's inpainting checkpoint where COMFYUI_CHECKPOINTS maps `sdxl:inpainting`, else the base.
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, MODEL_ID, undefined, 'inpainting'));
    const conditioning = encodePrompts(w, checkpoint.clip, fields.string('prompt'), '');
    const { pixels: canvas, mask } = padForOutpaint(w, fields, loadImage(w, fields.image('init_image')));
    const pixels = w
      .node('ImageScaleToTotalPixels', {
        image: canvas,
        upscale_method: 'lanczos',
        megapixels: workingMegapixels(fields.number('resolution')),
      })
      .out(0);
    // InpaintModelConditioning scales the mask to the working size itself.
    const samples = fields.number('samples');
    const { latent, ...painted } = inpaint(w, conditioning, checkpoint.vae, pixels, mask, samples);
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
    const decoded = w.node('VAEDecode', { samples: sampled, vae: checkpoint.vae }).out(0);
    // ImageCompositeMasked answers the destination's batch: one grown canvas per sample.
    const canvases =
      samples > 1 ? w.node('RepeatImageBatch', { image: canvas, amount: samples }).out(0) : canvas;
    w.save(
      w
        .node('ImageCompositeMasked', {
          destination: canvases,
          source: decoded,
          x: 0,
          y: 0,
          resize_source: true,
          mask,
        })
        .out(0),
    );
    return w.compiled();
  },
};
