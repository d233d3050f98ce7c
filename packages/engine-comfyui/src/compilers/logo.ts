import { applyControlnets, CONTROLNET_FILES } from '../chains/controlnet-stack.ts';
import { framedSize, inputSize } from '../chains/image-size.ts';
import { IMAGE_NODES } from '../chains/input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  checkpointNeed,
  loadCheckpoint,
  profileOf,
} from '../chains/model-files.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import { drawAtSize, LARGE_TEXT_TO_IMAGE_NODES } from '../chains/text-to-image.ts';
import type { PipelineCompiler } from '../contracts.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/logo/v1`: a sketch or an existing logo (`image`) made into a finished logo, on core nodes
 * only: SDXL text to image held to the lines of `image` by the SDXL Canny ControlNet at full
 * strength, with SDXL's own steps, guidance and sampler (its profile), as the request carries none.
 * The sketch frames the answer: its proportions over the requested area, sampled near SDXL's
 * megapixel (ControlNet would otherwise crop it to the requested shape).
 *
 * `logo_prompt` is refused: the contract gives it no meaning beside `prompt` (no description, no
 * example), and guessing one (text to write, a second prompt) would be a silent approximation.
 */
const PIPELINE = '/logo/v1';

/** The request names no model: SDXL's (mappable as `sdxl`). */
const MODEL_ID = 'sdxl';

/** The Canny ControlNet at full strength, as diffusers' SDXL ControlNet pipeline applies it. */
const CONTROL_STRENGTH = 1;

const LOGO_NODES: readonly NodeClass[] = [
  'LoadImage',
  'Canny',
  'ControlNetLoader',
  'ControlNetApplyAdvanced',
];

const REFUSED = {
  logo_prompt:
    'has no meaning of its own beside prompt in this API, so the engine has nothing faithful to map it to; describe the logo in prompt',
};

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(CHECKPOINT_DIFFUSION_NODES, IMAGE_NODES.load, LOGO_NODES, LARGE_TEXT_TO_IMAGE_NODES),
    models: [
      checkpointNeed(MODEL_ID),
      { folder: 'controlnet', what: `\`${CONTROLNET_FILES.sdxl['canny']}\`` },
    ],
    refuses: refusals(REFUSED),
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    fields.refuseUnlessDefault(REFUSED);
    const w = new Workflow(ctx.filenamePrefix);
    const profile = profileOf(ctx, MODEL_ID, MODEL_ID);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, MODEL_ID));
    const conditioning = applyControlnets(
      w,
      encodePrompts(w, checkpoint.clip, fields.string('prompt'), ''),
      checkpoint.vae,
      [
        {
          name: 'canny',
          file: CONTROLNET_FILES.sdxl['canny']!,
          image: fields.image('image'),
          strength: CONTROL_STRENGTH,
          start: 0,
          end: 1,
          // Canny takes no working size.
          resolution: 0,
        },
      ],
    );
    const requested = { width: fields.number('width'), height: fields.number('height') };
    drawAtSize(w, {
      model: checkpoint.model,
      vae: checkpoint.vae,
      ...conditioning,
      profile,
      settings: profile.sampling,
      seed: ctx.seed,
      target: framedSize(inputSize(ctx, 'image'), requested),
      samples: 1,
    });
    return w.compiled();
  },
};
