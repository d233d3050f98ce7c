import { INPAINT_NODES, inpaint } from '../chains/inpainting.ts';
import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  loadCheckpoint,
  profileOf,
  roleNeed,
} from '../chains/model-files.ts';
import { modelSettings } from '../chains/model-settings.ts';
import { OUTPAINT_FEATHERING, OUTPAINT_NODES, padForOutpaint } from '../chains/outpainting.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { type ModelProfile, nativeArea } from '../model-profiles.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/outpainting/v1`: `init_image` on a canvas grown by `expansion` pixels in each `direction`;
 * the new border is painted from the prompt by the SDXL checkpoint, blended into the old picture.
 * As ComfyUI's outpainting example (inpaint/inpain_model_outpainting.png): ImagePadForOutpaint,
 * then inpainting of its mask, sampled fully (denoise 1): the border holds nothing to keep, and a
 * partial denoise would smear its grey. SDXL draws well only near its own area, so the grown
 * canvas is sampled at `resolution` squared pixels in its own proportions, within SDXL's range
 * (its profile's; a 512 px photo grown by 64 px would otherwise be sampled at 576 x 512, a
 * quarter of SDXL's megapixel), with the model's own sampler, and the painting is laid over the
 * grown canvas at exactly its size through the same mask: the old picture stays pixel for pixel,
 * the answer is exactly the grown canvas. `strength` is how far the new border blends into the old
 * picture: the example's 40 px of feathering at 1, none at 0.
 */
const PIPELINE = '/outpainting/v1';
/** The request names no model: the general SDXL checkpoint paints (mappable as `sdxl`). */
const MODEL_ID = 'sdxl';

const TILING = 'tiling large canvases is not served by this engine: the canvas is painted in one pass';

const NOT_SERVED = {
  overlap: 'the blend is ImagePadForOutpaint feathering, which this engine keeps at its default',
  horizontal_tile: TILING,
  vertical_tile: TILING,
  stretch_area: 'stretching the picture before outpainting is not served by this engine',
  stretch_scale: 'stretching the picture before outpainting is not served by this engine',
};

/** ImageScaleToTotalPixels counts a megapixel as 1024 x 1024. */
const MEGAPIXEL = 1024 * 1024;

/**
 * The working area of `resolution` (a square's side) in ImageScaleToTotalPixels' megapixels:
 * resolution squared, within the model's range.
 */
export function workingMegapixels(profile: ModelProfile, resolution: number): number {
  const { minShare, maxShare } = profile.pixels;
  const native = nativeArea(profile);
  const area = Math.min(native * maxShare, Math.max(native * minShare, resolution * resolution));
  return Number((area / MEGAPIXEL).toFixed(4));
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
    // SDXL's inpainting checkpoint where COMFYUI_CHECKPOINTS maps `sdxl:inpainting`, else the base.
    const profile = profileOf(ctx, MODEL_ID, MODEL_ID, 'inpainting');
    const settings = modelSettings(profile, fields, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, MODEL_ID, undefined, 'inpainting'));
    const conditioning = encodePrompts(w, checkpoint.clip, fields.string('prompt'), '');
    const { pixels: canvas, mask } = padForOutpaint(
      w,
      fields,
      loadImage(w, fields.image('init_image')),
      Math.round(OUTPAINT_FEATHERING * fields.number('strength')),
    );
    const pixels = w
      .node('ImageScaleToTotalPixels', {
        image: canvas,
        upscale_method: 'lanczos',
        megapixels: workingMegapixels(profile, fields.number('resolution')),
      })
      .out(0);
    // InpaintModelConditioning scales the mask to the working size itself.
    const samples = fields.number('samples');
    const { latent, ...painted } = inpaint(w, conditioning, checkpoint.vae, pixels, mask, samples);
    const sampled = w.sample({
      model: checkpoint.model,
      seed: ctx.seed,
      steps: settings.steps,
      cfg: settings.cfg,
      sampler_name: settings.sampler_name,
      scheduler: settings.scheduler,
      ...painted,
      latent_image: latent,
      // The border is new: it is sampled fully, whatever strength says.
      denoise: 1,
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
