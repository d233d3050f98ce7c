import { COMPOSITE_NODES, compositeOver, SOFT_MASK_NODES, softenMask } from '../chains/composite.ts';
import { EXACT_SIZE_NODES, framedSize, inputSize, planSizes, scaleTo } from '../chains/image-size.ts';
import { INPAINT_NODES, inpaint } from '../chains/inpainting.ts';
import { encodeImage, IMAGE_NODES, loadImage, loadMask, scaleImage } from '../chains/input-images.ts';
import { applyModelLoras, MODEL_LORA_NODES } from '../chains/lora-stack.ts';
import { FLUX_VAE, fixedModelFile, fixedModelNeed, TEXT_ENCODERS } from '../chains/model-files.ts';
import { modelSettings, NO_GUIDANCE, settingsRefusal, settingsRefusals } from '../chains/model-settings.ts';
import { withPalette } from '../chains/palette.ts';
import { PROMPT_NODES } from '../chains/prompt-encoding.ts';
import { styledPrompts, UNKNOWN_STYLE } from '../chains/prompt-styles.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import { HIRES_DENOISE, PASS_NODES, samplePasses } from '../chains/sampling-passes.ts';
import type { CompileContext, PipelineCompiler } from '../contracts.ts';
import { MODEL_PROFILES } from '../model-profiles.ts';
import type { Link } from '../workflow/graph.ts';
import { nodeClasses, SAVE_NODES, Workflow } from '../workflow/workflow.ts';

/**
 * `/generate/v3`: Flux, as ComfyUI_examples' flux workflows run it. The bare diffusion model, its
 * two text encoders (T5-XXL and CLIP-L) and VAE, sampled at cfg 1: Flux is guidance-distilled and
 * never reads a negative prompt, so the negative is the prompt's conditioning zeroed
 * (ConditioningZeroOut) rather than an empty prompt sent through T5 for nothing.
 *
 * The original documents Flux Schnell here, so schnell runs unless COMFYUI_CHECKPOINTS maps
 * `flux:dev` (or `flux-dev`) to its file, which makes this path run dev instead; each samples as
 * its profile says (model-profiles.ts):
 * - schnell is timestep-distilled: the default request runs its 4 steps, more are refused, and
 *   it takes no guidance at all (no FluxGuidance node); a `guidance_scale` other than the default
 *   is noted, as the original's diffusers pipeline takes no notice of it on Schnell;
 * - dev reads its distilled guidance from FluxGuidance: `guidance_scale` is that guidance, and the
 *   API's default (7.5, an SD value that burns dev's pictures) stands for dev's own 3.5; its
 *   ModelSamplingFlux shift follows the sampled size, as the dev example sets it.
 * `style` is applied as a prompt style and `palette` as colour words after it (chains/palette.ts);
 * `init_image` makes it image to image, framed as the picture is (never cropped), `mask_image`
 * inpainting, laid back over the picture at its own size. Without `init_image`, `strength` and
 * `mask_image` have no picture to act on: the task draws from the prompt and notes them, as the
 * original's text-to-image pipeline took no notice of them. `enhance_prompt` is the worker's: the
 * prompt is rewritten before the engine gets it.
 */
const PIPELINE = '/generate/v3';

/** The two Flux models this path runs, by the model id their files are kept under. */
export const FLUX = {
  schnell: { model: 'flux-schnell', profile: MODEL_PROFILES['flux-schnell'] },
  dev: { model: 'flux-dev', profile: MODEL_PROFILES['flux-dev'] },
} as const;

/** ModelSamplingFlux's shifts in ComfyUI_examples' dev workflow (its node's defaults). */
const FLUX_SHIFT = { max_shift: 1.15, base_shift: 0.5 } as const;

/** Which Flux model this path runs on a server set up by COMFYUI_CHECKPOINTS. */
export function fluxModel(ctx: Pick<CompileContext, 'checkpoints'>): 'schnell' | 'dev' {
  return FLUX.dev.model in ctx.checkpoints ? 'dev' : 'schnell';
}

const SCHNELL_NEED = fixedModelNeed(FLUX.schnell.model);

/** What the path takes no notice of without a picture to start from. */
const WITHOUT_INIT_IMAGE = {
  strength:
    'applies only with init_image (image to image); without one the picture is drawn from the prompt, so the model takes no notice of it',
  mask_image:
    'marks the part of init_image to repaint, and no init_image was sent; the picture is drawn from the prompt',
};

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(
      ['UNETLoader'],
      MODEL_LORA_NODES,
      ['DualCLIPLoader', 'VAELoader', 'ModelSamplingFlux'],
      PROMPT_NODES,
      ['FluxGuidance', 'ConditioningZeroOut', 'EmptySD3LatentImage'],
      IMAGE_NODES.sized,
      IMAGE_NODES.encode,
      IMAGE_NODES.mask,
      SOFT_MASK_NODES,
      INPAINT_NODES,
      COMPOSITE_NODES,
      PASS_NODES,
      EXACT_SIZE_NODES,
      SAVE_NODES,
    ),
    models: [
      {
        ...SCHNELL_NEED,
        what: `${SCHNELL_NEED.what}; with \`flux:dev\` (or \`flux-dev\`) mapped, the file it maps to (Flux Dev runs)`,
      },
      { folder: 'text_encoders', what: `\`${TEXT_ENCODERS.clipL}\` and \`${TEXT_ENCODERS.t5xxl}\`` },
      { folder: 'vae', what: `\`${FLUX_VAE}\`` },
      {
        folder: 'loras',
        what: 'each Flux LoRA `lora_models` names (`.safetensors` added to a name without extension)',
      },
    ],
    refuses: [{ field: 'style', why: UNKNOWN_STYLE }, ...settingsRefusals('steps')],
    ignores: [NO_GUIDANCE, ...refusals(WITHOUT_INIT_IMAGE)],
  },
  // Steps past Schnell's 4 are refused at submission.
  admit: (ctx) => settingsRefusal(FLUX[fluxModel(ctx)].profile, requestFields(PIPELINE, ctx), ctx),
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    const fromPicture = fields.has('init_image');
    if (!fromPicture) fields.ignoreUnlessDefault(w, WITHOUT_INIT_IMAGE);
    const flux = FLUX[fluxModel(ctx)];
    const { profile } = flux;
    const settings = modelSettings(w, profile, fields, ctx);

    const requested = { width: fields.number('width'), height: fields.number('height') };
    const target = fromPicture ? framedSize(inputSize(ctx, 'init_image'), requested) : requested;
    const plan = planSizes(profile, target, target);

    const unet = fixedModelFile(ctx, flux.model);
    w.usesModel(unet);
    let model = applyModelLoras(
      w,
      fields,
      w.node('UNETLoader', { unet_name: unet, weight_dtype: 'default' }).out(0),
      'flux',
    );
    if (settings.guidance !== undefined) {
      model = w.node('ModelSamplingFlux', { model, ...FLUX_SHIFT, ...plan.first }).out(0);
    }
    const clip = w
      .node('DualCLIPLoader', {
        clip_name1: TEXT_ENCODERS.t5xxl,
        clip_name2: TEXT_ENCODERS.clipL,
        type: 'flux',
      })
      .out(0);
    const vae = w.node('VAELoader', { vae_name: FLUX_VAE }).out(0);
    const text = withPalette(styledPrompts(fields).positive, fields);
    const encoded = w.node('CLIPTextEncode', { text, clip }).out(0);
    let conditioning = {
      positive:
        settings.guidance === undefined
          ? encoded
          : w.node('FluxGuidance', { conditioning: encoded, guidance: settings.guidance }).out(0),
      // At cfg 1 the sampler never reads the negative; KSampler still wants one.
      negative: w.node('ConditioningZeroOut', { conditioning: encoded }).out(0),
    };

    const samples = fields.number('samples');
    const originalSize = inputSize(ctx, 'init_image');
    let latent: Link<'LATENT'>;
    let original: Link<'IMAGE'> | undefined;
    let mask: Link<'MASK'> | undefined;
    if (fromPicture && fields.has('mask_image')) {
      original = loadImage(w, fields.image('init_image'));
      mask = softenMask(w, loadMask(w, fields.image('mask_image')), originalSize);
      const pixels = scaleImage(w, original, plan.first);
      ({ latent, ...conditioning } = inpaint(w, conditioning, vae, pixels, mask, samples));
    } else if (fromPicture) {
      latent = encodeImage(
        w,
        scaleImage(w, loadImage(w, fields.image('init_image')), plan.first),
        vae,
        samples,
      );
    } else {
      latent = w.node('EmptySD3LatentImage', { ...plan.first, batch_size: samples }).out(0);
    }
    const strength = fromPicture ? fields.number('strength') : 1;
    const { image, size } = samplePasses(w, {
      sampler: {
        model,
        seed: ctx.seed,
        steps: settings.steps,
        cfg: settings.cfg,
        sampler_name: settings.sampler_name,
        scheduler: settings.scheduler,
        ...conditioning,
      },
      vae,
      latent,
      denoise: strength,
      plan,
      secondDenoise: Math.min(HIRES_DENOISE, strength),
      ...(mask ? { mask } : {}),
    });
    w.save(
      original && mask
        ? compositeOver(w, { original, originalSize, painted: image, paintedSize: size, mask, samples })
        : scaleTo(w, image, size, target),
    );
    return w.compiled();
  },
};
