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
import { requestFields } from '../chains/request-fields.ts';
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
 * `logo_prompt` says what the mark itself shows (its subject, its lettering) where `prompt` says
 * the finish: the original's frontend sends it beside the prompt (the same words when its form has
 * one box). The logo is drawn from both: `logo_prompt` is written after the prompt in one
 * encoding (CLIPTextEncode reads a long prompt in 77-token windows, so neither crowds the other
 * out), and left out where it only repeats the prompt.
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

/** The prompt the logo is drawn from: `prompt`, then `logo_prompt` where it adds words of its own. */
export function logoText(prompt: string, logoPrompt: string): string {
  const mark = logoPrompt.trim();
  if (!mark || mark === prompt.trim()) return prompt;
  return prompt.trim() ? `${prompt.trim()}, ${mark}` : mark;
}

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(CHECKPOINT_DIFFUSION_NODES, IMAGE_NODES.load, LOGO_NODES, LARGE_TEXT_TO_IMAGE_NODES),
    models: [
      checkpointNeed(MODEL_ID),
      { folder: 'controlnet', what: `\`${CONTROLNET_FILES.sdxl['canny']}\`` },
    ],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    const profile = profileOf(ctx, MODEL_ID, MODEL_ID);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, MODEL_ID));
    const conditioning = applyControlnets(
      w,
      encodePrompts(w, checkpoint.clip, logoText(fields.string('prompt'), fields.string('logo_prompt')), ''),
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
