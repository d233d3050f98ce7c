import { inputSize } from '../chains/image-size.ts';
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
import {
  blendWidth,
  grownSize,
  NO_STRETCH,
  OUTPAINT_NODES,
  OUTPAINT_TILE_NODES,
  outpaintPadding,
  outpaintTiles,
  padForOutpaint,
  paintTiles,
  STRETCH_NODES,
  stretchIntoBorder,
  stretchOf,
  TILE_COUNT_WHY,
  tileCount,
} from '../chains/outpainting.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { type ModelProfile, nativeArea } from '../model-profiles.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/outpainting/v1`: `init_image` on a canvas grown by `expansion` pixels in each `direction`;
 * the new border is painted from the prompt by the SDXL checkpoint, blended into the old picture.
 * As ComfyUI's outpainting example (inpaint/inpain_model_outpainting.png): ImagePadForOutpaint,
 * then inpainting of its mask. SDXL draws well only near its own area, so the grown canvas is
 * sampled at `resolution` squared pixels in its own proportions, within SDXL's range (its
 * profile's; a 512 px photo grown by 64 px would otherwise be sampled at 576 x 512, a quarter of
 * SDXL's megapixel), with the model's own sampler, and the painting is laid over the grown canvas
 * at exactly its size through the same mask: the old picture stays pixel for pixel, the answer is
 * exactly the grown canvas. The fine-tuning fields of the original's page (chains/outpainting.ts):
 *
 * - `overlap` is the blend band, a share of the canvas's longer side (else the example's 40 px);
 *   `strength` scales it: how far the new border blends into the old picture (none at 0);
 * - `stretch_area` and `stretch_scale` stretch the picture's edge outward over the new border
 *   before it is painted, so the border starts from the picture continued instead of grey, and it
 *   is then sampled at `strength` (its layout and colours kept as far as strength leaves them);
 *   without them the border holds nothing to keep and is sampled fully (a partial denoise would
 *   smear its grey);
 * - `horizontal_tile` and `vertical_tile` paint a large canvas in that grid of tiles, each sampled
 *   at the working area, so the border of a large picture is drawn at its own detail rather than
 *   at one megapixel for the whole canvas; tiles overlap and blend, and those wholly inside the old
 *   picture are left alone.
 */
const PIPELINE = '/outpainting/v1';
/** The request names no model: the general SDXL checkpoint paints (mappable as `sdxl`). */
const MODEL_ID = 'sdxl';

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
      STRETCH_NODES,
      OUTPAINT_TILE_NODES,
    ),
    models: [roleNeed(MODEL_ID, 'inpainting')],
    ignores: [
      ...refusals(NO_STRETCH),
      ...(['horizontal_tile', 'vertical_tile'] as const).map((field) => ({ field, why: TILE_COUNT_WHY })),
    ],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    // SDXL's inpainting checkpoint where COMFYUI_CHECKPOINTS maps `sdxl:inpainting`, else the base.
    const profile = profileOf(ctx, MODEL_ID, MODEL_ID, 'inpainting');
    const w = new Workflow(ctx.filenamePrefix);
    const settings = modelSettings(w, profile, fields, ctx);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, MODEL_ID, undefined, 'inpainting'));
    const conditioning = encodePrompts(w, checkpoint.clip, fields.string('prompt'), '');
    const picture = inputSize(ctx, 'init_image');
    const padding = outpaintPadding(fields);
    const canvasSize = picture && grownSize(picture, padding);
    const strength = fields.number('strength');
    const blend = blendWidth(fields, canvasSize, strength);
    const image = loadImage(w, fields.image('init_image'));
    const padded = padForOutpaint(w, image, padding, blend);
    const { mask } = padded;
    const stretch = stretchOf(fields);
    if (stretch && 'note' in stretch) w.note(stretch.note);
    const stretched = stretch && !('note' in stretch) && picture ? stretch : undefined;
    const canvas = stretched
      ? stretchIntoBorder(w, padded.pixels, picture!, padding, stretched)
      : padded.pixels;
    // A stretched border holds the picture continued: sampled at strength. A grey one holds nothing.
    const denoise = stretched ? strength : 1;
    const megapixels = workingMegapixels(profile, fields.number('resolution'));
    const samples = fields.number('samples');

    /** The pictures of `pixels` painted under `mask` at the working size (a batch of `batch`). */
    const paint = (pixels: Link<'IMAGE'>, region: Link<'MASK'>, batch: number): Link<'IMAGE'> => {
      const working = w
        .node('ImageScaleToTotalPixels', { image: pixels, upscale_method: 'lanczos', megapixels })
        .out(0);
      // InpaintModelConditioning scales the mask to the working size itself.
      const { latent, ...painted } = inpaint(w, conditioning, checkpoint.vae, working, region, batch);
      const sampled = w.sample({
        model: checkpoint.model,
        seed: ctx.seed,
        steps: settings.steps,
        cfg: settings.cfg,
        sampler_name: settings.sampler_name,
        scheduler: settings.scheduler,
        ...painted,
        latent_image: latent,
        denoise,
      });
      return w.node('VAEDecode', { samples: sampled, vae: checkpoint.vae }).out(0);
    };

    // ImageCompositeMasked answers the destination's batch: one grown canvas per sample.
    const canvases =
      samples > 1 ? w.node('RepeatImageBatch', { image: canvas, amount: samples }).out(0) : canvas;
    const columns = canvasSize
      ? tileCount(w, 'horizontal_tile', fields.optionalNumber('horizontal_tile'), canvasSize.width)
      : 1;
    const rows = canvasSize
      ? tileCount(w, 'vertical_tile', fields.optionalNumber('vertical_tile'), canvasSize.height)
      : 1;
    if (columns * rows > 1 && canvasSize && picture) {
      // Each tile is cut from the batch of canvases, so its pictures are already one per sample.
      const tiles = outpaintTiles(canvasSize, columns, rows, picture, padding, blend);
      w.save(paintTiles(w, canvases, mask, tiles, (pixels, region) => paint(pixels, region, 1)));
      return w.compiled();
    }
    w.save(
      w
        .node('ImageCompositeMasked', {
          destination: canvases,
          source: paint(canvas, mask, samples),
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
