import { planSizes, type Size, type SizePlan } from '../chains/image-size.ts';
import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  DEFAULT_CHECKPOINTS,
  loadCheckpoint,
  roleFile,
} from '../chains/model-files.ts';
import { settingsRefusal, settingsRefusals } from '../chains/model-settings.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { requestFields } from '../chains/request-fields.ts';
import { drawRequested, TEXT_TO_IMAGE_NODES } from '../chains/text-to-image.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { MODEL_PROFILES } from '../model-profiles.ts';
import { packNeeds } from '../node-packs.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/instamodel/v1`: portraits of `input_face` without training, with InstantID on SDXL
 * (cubiq's ComfyUI_InstantID): the face's insightface embedding through InstantID's adapter and its
 * landmarks through InstantID's ControlNet, both at the demo's 0.8, then text to image with the
 * request's steps, guidance and size.
 *
 * The request's defaults (9 steps, guidance 1) are those of a step-distilled SDXL; the SDXL base
 * at 9 steps without guidance draws mush. So the model is ByteDance's SDXL-Lightning 8-step
 * checkpoint (its ComfyUI all-in-one file), sampled as its model card (its profile) says: Euler
 * on sgm_uniform, 8 steps, no classifier-free guidance; the request's own steps and guidance up to
 * the 8 and 2 it is distilled for. Passes run at 1016 px where they would be 1024 x 1024, as
 * InstantID's README asks. An operator maps SDXL's lightning role (`sdxl:lightning`, or the older
 * `sdxl-lightning`) in COMFYUI_CHECKPOINTS to another Lightning-distilled SDXL.
 */
const PIPELINE = '/instamodel/v1';

/** InstantID's adapter (folder `instantid`) and ControlNet (folder `controlnet`), from InstantX/InstantID. */
export const INSTANTID_FILES = {
  adapter: 'ip-adapter.bin',
  controlnet: 'instantid-controlnet.safetensors',
} as const;

/** The step-distilled SDXL the defaults are made for: its model id (mappable) and usual file. */
export const INSTAMODEL_CHECKPOINT = {
  id: 'sdxl-lightning',
  file: DEFAULT_CHECKPOINTS['sdxl-lightning']!,
} as const;

/** SDXL-Lightning's profile: its card's sampling, steps and guidance. */
const LIGHTNING = MODEL_PROFILES['sdxl-lightning'];

/**
 * InstantID's README: sampling at exactly 1024 x 1024 brings out watermarks its training pictures
 * carried; 1016 x 1016 does not.
 */
export const INSTANTID_AVOIDED = { avoid: 1024, instead: 1016 } as const;

/** A pass's size, moved off the square InstantID draws watermarks at. */
function offWatermark(size: Size): Size {
  const { avoid, instead } = INSTANTID_AVOIDED;
  return size.width === avoid && size.height === avoid ? { width: instead, height: instead } : size;
}

/** The sizes InstantID samples: the profile's plan with each pass off the watermark square. */
export function instantIdPlan(target: Size): SizePlan {
  const plan = planSizes(LIGHTNING, target, target);
  return {
    first: offWatermark(plan.first),
    ...(plan.second ? { second: offWatermark(plan.second) } : {}),
    answer: plan.answer,
  };
}

/** The InstantID demo's identity and ControlNet strength (ApplyInstantID's one weight sets both). */
const INSTANTID_WEIGHT = 0.8;

const INSTANTID_NODES: readonly NodeClass[] = [
  'InstantIDModelLoader',
  'InstantIDFaceAnalysis',
  'ControlNetLoader',
  'ApplyInstantID',
];

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(CHECKPOINT_DIFFUSION_NODES, INSTANTID_NODES, IMAGE_NODES.load, TEXT_TO_IMAGE_NODES),
    packs: packNeeds('ComfyUI_InstantID'),
    models: [
      {
        folder: 'checkpoints',
        what: `\`${INSTAMODEL_CHECKPOINT.file}\` (ByteDance/SDXL-Lightning), or the Lightning-distilled SDXL file \`COMFYUI_CHECKPOINTS\` maps \`sdxl:lightning\` (or \`${INSTAMODEL_CHECKPOINT.id}\`) to`,
      },
      { folder: 'instantid', what: `\`${INSTANTID_FILES.adapter}\`` },
      {
        folder: 'controlnet',
        what: `\`${INSTANTID_FILES.controlnet}\` (InstantID's \`ControlNetModel/diffusion_pytorch_model.safetensors\`)`,
      },
      { folder: 'insightface', what: '`models/antelopev2/` (the face analysis InstantID reads)' },
    ],
    refuses: settingsRefusals('steps', 'cfg'),
  },
  // Steps or guidance past what SDXL-Lightning is distilled for are refused at submission.
  admit: (ctx) => settingsRefusal(LIGHTNING, requestFields(PIPELINE, ctx), ctx),
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    // SDXL's lightning role: `sdxl:lightning` (or its older id `sdxl-lightning`) in COMFYUI_CHECKPOINTS.
    const checkpoint = loadCheckpoint(w, roleFile(ctx, 'sdxl', 'lightning') ?? INSTAMODEL_CHECKPOINT.file);
    const prompts = encodePrompts(
      w,
      checkpoint.clip,
      fields.string('prompt'),
      fields.string('negative_prompt'),
    );
    const [model, positive, negative] = w.node('ApplyInstantID', {
      instantid: w.node('InstantIDModelLoader', { instantid_file: INSTANTID_FILES.adapter }).out(0),
      // Face analysis is light work: on the CPU it runs on every server, with or without CUDA.
      insightface: w.node('InstantIDFaceAnalysis', { provider: 'CPU' }).out(0),
      control_net: w.node('ControlNetLoader', { control_net_name: INSTANTID_FILES.controlnet }).out(0),
      image: loadImage(w, fields.image('input_face')),
      model: checkpoint.model,
      ...prompts,
      weight: INSTANTID_WEIGHT,
      start_at: 0,
      end_at: 1,
    }).outputs;
    drawRequested(
      w,
      fields,
      ctx,
      LIGHTNING,
      { model, vae: checkpoint.vae, positive, negative },
      instantIdPlan,
    );
    return w.compiled();
  },
};
