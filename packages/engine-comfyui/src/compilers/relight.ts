import {
  budgetSize,
  EXACT_SIZE_NODES,
  framedSize,
  inputSize,
  type Size,
  samplingSize,
  scaleTo,
} from '../chains/image-size.ts';
import { encodeImage, IMAGE_NODES, loadImageAt } from '../chains/input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  checkpointNeed,
  loadCheckpoint,
} from '../chains/model-files.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { requestFields } from '../chains/request-fields.ts';
import { SUBJECT_MASK_NODES, SUBJECT_MODEL_NEED, subjectMask } from '../chains/subject-mask.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { MODEL_PROFILES } from '../model-profiles.ts';
import { packNeeds } from '../node-packs.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/relight/v1`: IC-Light (foreground-conditioned, SD1.5) with kijai's ComfyUI-IC-Light, as
 * IC-Light's `gradio_demo.py` relights with a light direction:
 * - the photo frames the answer: its proportions over the requested area (the demo crops it to
 *   the requested shape; no path here cuts a picture);
 * - the subject is cut out (RMBG; the demo runs BRIA's RMBG too) and laid on mid grey, the
 *   foreground the model is conditioned on;
 * - a gradient from the `light` side (LightSource) is the starting picture, sampled within SD1.5's
 *   budget (its profile's) at the answer over the demo's high-res scale, 1.5, on the demo's 64 px
 *   (the demo samples 512 x 640 for 768 x 960), with the demo's 25 steps, 0.9 denoise and prompts;
 * - the result is enlarged to the answer (by the demo's 1.5 at least, up to SD1.5's second-pass
 *   reach) and sampled again at the demo's 0.5 denoise, conditioned on the foreground at that
 *   size, which redraws detail the small pass could not hold; then scaled to the answer.
 * Guidance is the demo's 2 where the request leaves the API's default (8, a base model's value
 * that burns IC-Light's pictures), else the request's.
 */
const PIPELINE = '/relight/v1';

/** IC-Light's foreground model patches SD1.5: its checkpoint (mappable as `sd1.5`) and profile. */
const MODEL_ID = 'sd1.5';
const PROFILE = MODEL_PROFILES['sd1.5'];

/** The IC-Light foreground-conditioned weights (folder `unet`), as lllyasviel publishes them. */
export const IC_LIGHT_UNET = 'iclight_sd15_fc.safetensors';

/** The contract's light sides as LightSource's positions. */
const LIGHT_POSITIONS: Readonly<Record<string, string>> = {
  left: 'Left Light',
  right: 'Right Light',
  top: 'Top Light',
  bottom: 'Bottom Light',
};

/** The IC-Light demo's settings the request does not carry. */
const DEMO = {
  steps: 25,
  denoise: 0.9,
  highresScale: 1.5,
  highresDenoise: 0.5,
  cfg: 2,
  /** The demo's grey under the cut-out subject (127 of 255). */
  grey: 0x7f7f7f,
  addedPrompt: 'best quality',
  negativePrompt: 'lowres, bad anatomy, bad hands, cropped, worst quality',
} as const;

/** SD1.5's latent scale, the multiplier ICLightConditioning is declared with. */
const LATENT_SCALE = 0.18215;

const RELIGHT_NODES: readonly NodeClass[] = [
  'LoadAndApplyICLightUnet',
  'ICLightConditioning',
  'LightSource',
  'EmptyImage',
  'ImageCompositeMasked',
  'VAEDecode',
];

/** The demo's sizes snap to 64 px. */
const DEMO_GRID = { multiple: 64, min: 64 } as const;

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(
      CHECKPOINT_DIFFUSION_NODES,
      RELIGHT_NODES,
      SUBJECT_MASK_NODES,
      IMAGE_NODES.sized,
      IMAGE_NODES.encode,
      EXACT_SIZE_NODES,
    ),
    packs: packNeeds('ComfyUI-IC-Light', 'ComfyUI-RMBG'),
    models: [checkpointNeed(MODEL_ID), { folder: 'unet', what: `\`${IC_LIGHT_UNET}\`` }, SUBJECT_MODEL_NEED],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const requested = { width: fields.number('width'), height: fields.number('height') };
    const answer = framedSize(inputSize(ctx, 'init_image'), requested);
    const { secondPassShare } = PROFILE.pixels;
    const small = samplingSize(
      budgetSize(PROFILE, {
        width: answer.width / DEMO.highresScale,
        height: answer.height / DEMO.highresScale,
      }),
      DEMO_GRID,
    );
    // The high-res pass enlarges by the demo's 1.5 at least, even for a small answer (scaled down after).
    const enlarge = Math.max(
      1,
      DEMO.highresScale * Math.sqrt((small.width * small.height) / (answer.width * answer.height)),
    );
    const size = budgetSize(
      PROFILE,
      { width: answer.width * enlarge, height: answer.height * enlarge },
      secondPassShare,
    );
    const samples = fields.number('samples');
    const w = new Workflow(ctx.filenamePrefix);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, MODEL_ID));
    const model = w
      .node('LoadAndApplyICLightUnet', { model: checkpoint.model, model_path: IC_LIGHT_UNET })
      .out(0);
    const prompts = encodePrompts(
      w,
      checkpoint.clip,
      [fields.string('prompt'), DEMO.addedPrompt].filter(Boolean).join(', '),
      DEMO.negativePrompt,
    );
    const picture = loadImageAt(w, fields.image('init_image'), size);
    const subject = subjectMask(w, picture);
    const foreground = w
      .node('ImageCompositeMasked', {
        destination: w.node('EmptyImage', { ...size, batch_size: 1, color: DEMO.grey }).out(0),
        source: picture,
        x: 0,
        y: 0,
        resize_source: false,
        mask: subject,
      })
      .out(0);
    /** The prompts conditioned on the foreground at one size. */
    const conditionedAt = (at: Size) => {
      const pixels = scaleTo(w, foreground, size, at);
      const [positive, negative] = w.node('ICLightConditioning', {
        ...prompts,
        vae: checkpoint.vae,
        foreground: w.node('VAEEncode', { pixels, vae: checkpoint.vae }).out(0),
        multiplier: LATENT_SCALE,
      }).outputs;
      return { positive, negative };
    };
    const light = w
      .node('LightSource', {
        light_position: LIGHT_POSITIONS[fields.string('light')]!,
        multiplier: 1,
        start_color: '#FFFFFF',
        end_color: '#000000',
        ...small,
      })
      .out(0);
    const sampler = {
      model,
      seed: ctx.seed,
      steps: DEMO.steps,
      cfg: fields.isDefault('guidance_scale') ? DEMO.cfg : fields.number('guidance_scale'),
      // The demo's DPM-Solver++ SDE with Karras sigmas.
      sampler_name: 'dpmpp_2m_sde',
      scheduler: 'karras',
    };
    const first = w.sample({
      ...sampler,
      ...conditionedAt(small),
      latent_image: encodeImage(w, light, checkpoint.vae, samples),
      denoise: DEMO.denoise,
    });
    const firstPixels = w.node('VAEDecode', { samples: first, vae: checkpoint.vae }).out(0);
    const second = w.sample({
      ...sampler,
      ...conditionedAt(size),
      latent_image: w
        .node('VAEEncode', { pixels: scaleTo(w, firstPixels, small, size), vae: checkpoint.vae })
        .out(0),
      denoise: DEMO.highresDenoise,
    });
    const decoded = w.node('VAEDecode', { samples: second, vae: checkpoint.vae }).out(0);
    w.save(scaleTo(w, decoded, size, answer));
    return w.compiled();
  },
};
