import { inputSize } from '../chains/image-size.ts';
import { encodeImage, IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  checkpointNeed,
  loadCheckpoint,
} from '../chains/model-files.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { requestFields } from '../chains/request-fields.ts';
import { samplingFor } from '../chains/schedulers.ts';
import { resampleTiles, TILE_NODES, tilesOf } from '../chains/tiles.ts';
import { UPSCALE_MODELS, upscaleWith } from '../chains/upscaling.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { MODEL_PROFILES } from '../model-profiles.ts';
import type { Link } from '../workflow/graph.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/upscaler/v1`: `input_image` enlarged x2 by an ESRGAN model. `deblur` stops there (what the cpu
 * engine does, on a GPU); `variation` then re-imagines detail: the enlarged picture is sampled
 * again from the prompt at part strength by the SDXL checkpoint, tile by tile as tiled upscalers
 * do (SDXL's own 1024 px tiles, overlapping by 64 px), so one sample stays at SDXL's size however
 * large the picture, and the answer is exactly the enlarged size.
 */
const PIPELINE = '/upscaler/v1';
const UPSCALER = UPSCALE_MODELS.RealESRGAN_x2plus;
const MODEL_ID = 'sdxl';

/** The variation pass's tiles: SDXL's own side (its profile's), and an overlap that hides the seams. */
export const VARIATION_TILES = { tile: MODEL_PROFILES.sdxl.pixels.side, overlap: 64 } as const;

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
      TILE_NODES,
    ),
    models: [
      { folder: 'upscale_models', what: `\`${UPSCALER.file}\`` },
      { ...VARIATION_MODEL, what: `for \`type: "variation"\`: ${VARIATION_MODEL.what}` },
    ],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    const enlarged = upscaleWith(w, loadImage(w, fields.image('input_image')), UPSCALER, UPSCALER.scale);
    if (fields.string('type') !== 'variation') {
      w.save(enlarged);
      return w.compiled();
    }
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, MODEL_ID));
    const conditioning = encodePrompts(w, checkpoint.clip, fields.string('prompt'), VARIATION.negative);
    const resample = (tile: Link<'IMAGE'>) => {
      const sampled = w.sample({
        model: checkpoint.model,
        seed: ctx.seed,
        steps: VARIATION.steps,
        cfg: VARIATION.cfg,
        ...samplingFor(VARIATION.scheduler),
        ...conditioning,
        latent_image: encodeImage(w, tile, checkpoint.vae, 1),
        denoise: VARIATION.denoise,
      });
      return w.node('VAEDecode', { samples: sampled, vae: checkpoint.vae }).out(0);
    };
    const input = inputSize(ctx, 'input_image');
    if (!input) {
      // The engine always knows the picture's size; without it, one pass over the whole picture.
      w.save(resample(enlarged));
      return w.compiled();
    }
    const size = { width: input.width * UPSCALER.scale, height: input.height * UPSCALER.scale };
    const tiles = tilesOf(size, VARIATION_TILES.tile, VARIATION_TILES.overlap);
    w.save(resampleTiles(w, enlarged, size, tiles, VARIATION_TILES.overlap, resample));
    return w.compiled();
  },
};
