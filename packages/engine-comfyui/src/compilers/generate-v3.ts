import { endpointByPath } from '@imagegen/contract';
import { EXACT_SIZE_NODES, SD3_GRID, samplingSize, scaleTo } from '../chains/image-size.ts';
import { INPAINT_NODES, inpaint } from '../chains/inpainting.ts';
import { encodeImage, IMAGE_NODES, loadImageAt, loadMaskAt } from '../chains/input-images.ts';
import { applyModelLoras, MODEL_LORA_NODES } from '../chains/lora-stack.ts';
import { FLUX_VAE, fixedModelFile, fixedModelNeed, TEXT_ENCODERS } from '../chains/model-files.ts';
import { PROMPT_NODES } from '../chains/prompt-encoding.ts';
import { styledPrompts, UNKNOWN_STYLE } from '../chains/prompt-styles.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import type { CompileContext, PipelineCompiler } from '../contracts.ts';
import type { Link } from '../workflow/graph.ts';
import { nodeClasses, SAMPLE_NODES, SAVE_NODES, Workflow } from '../workflow/workflow.ts';

/**
 * `/generate/v3`: Flux, as ComfyUI_examples' flux workflows run it. The bare diffusion model, its
 * two text encoders (T5-XXL and CLIP-L) and VAE, sampled with euler on the simple schedule at
 * cfg 1: Flux is guidance-distilled and never reads the negative prompt.
 *
 * The original documents Flux Schnell here, so schnell runs unless COMFYUI_CHECKPOINTS maps
 * `flux-dev` (to its file), which makes this path run dev instead:
 * - schnell is also timestep-distilled: the default request runs its 4 steps, and it takes no
 *   guidance at all (no FluxGuidance node); a `guidance_scale` other than the default is refused.
 * - dev reads its distilled guidance from FluxGuidance. The API's guidance_scale is scaled onto it
 *   so that the API's default (7.5) gives dev's own default (3.5): 7.5 burns dev's pictures.
 * `style` is applied as a prompt style; `init_image` makes it image to image, `mask_image` inpainting.
 */
const PIPELINE = '/generate/v3';

export const FLUX_SAMPLING = { sampler_name: 'euler', scheduler: 'simple', cfg: 1 } as const;

/** The two Flux models this path runs, as the ComfyUI_examples flux pages set them up. */
export const FLUX = {
  schnell: { model: 'flux-schnell', steps: 4 },
  dev: { model: 'flux-dev', guidance: 3.5 },
} as const;

/** The API's guidance_scale default: what dev's own default guidance stands for. */
const API_GUIDANCE = (
  endpointByPath(PIPELINE)?.request as { properties: Record<string, { default?: number }> } | undefined
)?.properties['guidance_scale']?.default as number;

/** Dev's distilled guidance for the API's guidance_scale. */
export function devGuidance(guidanceScale: number): number {
  return (guidanceScale * FLUX.dev.guidance) / API_GUIDANCE;
}

/** Which Flux model this path runs on a server set up by COMFYUI_CHECKPOINTS. */
export function fluxModel(ctx: Pick<CompileContext, 'checkpoints'>): 'schnell' | 'dev' {
  return FLUX.dev.model in ctx.checkpoints ? 'dev' : 'schnell';
}

const NOT_SERVED = {
  enhance_prompt: 'prompt rewriting needs a language model, which this engine does not have',
  palette: 'colour palettes are not served by this engine',
};

const SCHNELL_GUIDANCE =
  'Flux Schnell takes no guidance (it is guidance-distilled); the server runs Dev when COMFYUI_CHECKPOINTS maps flux-dev';

const SCHNELL_NEED = fixedModelNeed(FLUX.schnell.model);

const WITHOUT_INIT_IMAGE = {
  strength: 'applies only with init_image (image to image)',
  mask_image: 'inpaints init_image, which is not sent',
};

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(
      ['UNETLoader'],
      MODEL_LORA_NODES,
      ['DualCLIPLoader', 'VAELoader'],
      PROMPT_NODES,
      ['FluxGuidance', 'EmptySD3LatentImage'],
      IMAGE_NODES.sized,
      IMAGE_NODES.encode,
      IMAGE_NODES.mask,
      INPAINT_NODES,
      SAMPLE_NODES,
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
    refuses: [
      ...refusals(NOT_SERVED),
      { field: 'style', why: UNKNOWN_STYLE },
      { field: 'guidance_scale', why: SCHNELL_GUIDANCE },
      ...refusals(WITHOUT_INIT_IMAGE),
    ],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    fields.refuseUnlessDefault(NOT_SERVED);
    const fromPicture = fields.has('init_image');
    if (!fromPicture) fields.refuseUnlessDefault(WITHOUT_INIT_IMAGE);
    const flux = fluxModel(ctx);
    if (flux === 'schnell') fields.refuseUnlessDefault({ guidance_scale: SCHNELL_GUIDANCE });

    const w = new Workflow(ctx.filenamePrefix);
    const unet = fixedModelFile(ctx, FLUX[flux].model);
    w.usesModel(unet);
    const model = applyModelLoras(
      w,
      fields,
      w.node('UNETLoader', { unet_name: unet, weight_dtype: 'default' }).out(0),
      'flux',
    );
    const clip = w
      .node('DualCLIPLoader', {
        clip_name1: TEXT_ENCODERS.t5xxl,
        clip_name2: TEXT_ENCODERS.clipL,
        type: 'flux',
      })
      .out(0);
    const vae = w.node('VAELoader', { vae_name: FLUX_VAE }).out(0);
    const encoded = w.node('CLIPTextEncode', { text: styledPrompts(fields).positive, clip }).out(0);
    let conditioning = {
      positive:
        flux === 'dev'
          ? w
              .node('FluxGuidance', {
                conditioning: encoded,
                guidance: devGuidance(fields.number('guidance_scale')),
              })
              .out(0)
          : encoded,
      // At cfg 1 the sampler never reads the negative; KSampler still wants one.
      negative: w.node('CLIPTextEncode', { text: '', clip }).out(0),
    };

    const target = { width: fields.number('width'), height: fields.number('height') };
    const size = samplingSize(target, SD3_GRID);
    const samples = fields.number('samples');
    let latent: Link<'LATENT'>;
    if (fields.has('mask_image')) {
      const pixels = loadImageAt(w, fields.image('init_image'), size);
      const mask = loadMaskAt(w, fields.image('mask_image'), size);
      ({ latent, ...conditioning } = inpaint(w, conditioning, vae, pixels, mask, samples));
    } else if (fromPicture) {
      latent = encodeImage(w, loadImageAt(w, fields.image('init_image'), size), vae, samples);
    } else {
      latent = w.node('EmptySD3LatentImage', { ...size, batch_size: samples }).out(0);
    }
    const steps =
      flux === 'schnell' && !fields.has('num_inference_steps')
        ? FLUX.schnell.steps
        : fields.number('num_inference_steps');
    const sampled = w.sample({
      model,
      seed: ctx.seed,
      steps,
      ...FLUX_SAMPLING,
      ...conditioning,
      latent_image: latent,
      denoise: fromPicture ? fields.number('strength') : 1,
    });
    w.save(scaleTo(w, w.node('VAEDecode', { samples: sampled, vae }).out(0), size, target));
    return w.compiled();
  },
};
