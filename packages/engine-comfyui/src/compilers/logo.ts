import { applyControlnets, CONTROLNET_FILES } from '../chains/controlnet-stack.ts';
import { IMAGE_NODES } from '../chains/input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  checkpointNeed,
  loadCheckpoint,
} from '../chains/model-files.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import { samplingFor } from '../chains/schedulers.ts';
import { drawAtSize, TEXT_TO_IMAGE_NODES } from '../chains/text-to-image.ts';
import type { PipelineCompiler } from '../contracts.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/logo/v1`: a sketch or an existing logo (`image`) made into a finished logo, on core nodes
 * only: SDXL text to image at the request's size, held to the lines of `image` by the SDXL Canny
 * ControlNet at full strength, with diffusers' StableDiffusionXLControlNetPipeline defaults (50
 * steps, guidance 5), as the request carries neither.
 *
 * `logo_prompt` is refused: the contract gives it no meaning beside `prompt` (no description, no
 * example), and guessing one (text to write, a second prompt) would be a silent approximation.
 */
const PIPELINE = '/logo/v1';

/** StableDiffusionXLControlNetPipeline's defaults. */
const DIFFUSERS_CONTROLNET = { steps: 50, cfg: 5, strength: 1 } as const;

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
    nodes: nodeClasses(CHECKPOINT_DIFFUSION_NODES, IMAGE_NODES.load, LOGO_NODES, TEXT_TO_IMAGE_NODES),
    models: [checkpointNeed('sdxl'), { folder: 'controlnet', what: `\`${CONTROLNET_FILES.sdxl['canny']}\`` }],
    refuses: refusals(REFUSED),
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    fields.refuseUnlessDefault(REFUSED);
    const w = new Workflow(ctx.filenamePrefix);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, 'sdxl'));
    const conditioning = applyControlnets(
      w,
      encodePrompts(w, checkpoint.clip, fields.string('prompt'), ''),
      checkpoint.vae,
      [
        {
          name: 'canny',
          file: CONTROLNET_FILES.sdxl['canny']!,
          image: fields.image('image'),
          strength: DIFFUSERS_CONTROLNET.strength,
          start: 0,
          end: 1,
          // Canny takes no working size.
          resolution: 0,
        },
      ],
    );
    drawAtSize(w, {
      model: checkpoint.model,
      vae: checkpoint.vae,
      ...conditioning,
      sampling: samplingFor('EulerDiscreteScheduler'),
      seed: ctx.seed,
      steps: DIFFUSERS_CONTROLNET.steps,
      cfg: DIFFUSERS_CONTROLNET.cfg,
      target: { width: fields.number('width'), height: fields.number('height') },
      samples: 1,
    });
    return w.compiled();
  },
};
