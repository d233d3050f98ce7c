import type { SubmissionRefusal } from '@imagegen/engines';
import type {
  AdmitContext,
  CompileContext,
  CompiledWorkflow,
  PipelineCompiler,
  ServerRequirements,
} from '../contracts.ts';
import type { ModelProfile } from '../model-profiles.ts';
import { packNeeds } from '../node-packs.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';
import { COMPOSITE_NODES, compositeOver, SOFT_MASK_NODES, softenMask } from './composite.ts';
import {
  applyControlnets,
  CONTROLNET_FILES,
  CONTROLNET_NODES,
  type ControlnetFields,
  controlnetIgnores,
  controlUnits,
  type Family,
} from './controlnet-stack.ts';
import { applyHidiffusion, HIDIFFUSION_NODES } from './hidiffusion.ts';
import {
  EXACT_SIZE_NODES,
  firstInputSize,
  framedSize,
  HIRES_SCALE,
  inputSize,
  planSizes,
  type Size,
  scaleTo,
  timesSize,
} from './image-size.ts';
import { INPAINT_NODES, inpaint } from './inpainting.ts';
import { encodeImage, IMAGE_NODES, loadImage, loadMask, loadMaskAt, scaleImage } from './input-images.ts';
import {
  applyIpAdapters,
  IP_ADAPTER_FILES,
  IP_ADAPTER_REFUSALS,
  type IpAdapterFields,
  ipAdapterIgnores,
  ipAdapterNodes,
  otherFamilyAdapter,
} from './ip-adapter.ts';
import { applyLoras, LORA_NODES, type LoraFields } from './lora-stack.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  DEFAULT_CHECKPOINTS,
  knownProfile,
  loadCheckpoint,
  MODEL_FAMILY_ERROR,
  profileDecided,
  profileOf,
} from './model-files.ts';
import { applyLcm, LCM_NODES, modelSettings, settingsRefusal, settingsRefusals } from './model-settings.ts';
import {
  CLIP_SKIP_NODES,
  type EmbeddingFields,
  encodePrompts,
  skipClipLayers,
  withEmbeddings,
} from './prompt-encoding.ts';
import { type StyleFields, styledPrompts } from './prompt-styles.ts';
import { type PipelinesReading, RequestFields, refusals, requestFieldNames } from './request-fields.ts';
import {
  HIRES_DENOISE,
  MASKED_SECOND_PASS_NODES,
  PASS_NODES,
  SECOND_PASS_NODES,
  SECOND_PASS_UPSCALER_NEED,
  samplePasses,
} from './sampling-passes.ts';
import {
  ATTENTION_ALWAYS_SHARED,
  applyStyleAlignment,
  NOTHING_TO_ALIGN,
  STYLE_ALIGNED_NODES,
  type StyleAlignedFields,
} from './style-aligned.ts';
import { applyUpscaleField, GENERAL_UPSCALER, UPSCALE_NODES, type UpscaleFields } from './upscaling.ts';

/**
 * The Stable Diffusion 1.5 and SDXL pipelines (text2image, image2image, inpainting, controlnet and
 * the one-call generators) share one request shape and one graph: checkpoint, clip_skip, LoRAs,
 * prompts with embeddings, a starting latent per mode, controlnets, the sampler, a second pass,
 * exact size, upscale. Every setting the model decides (size, steps, guidance, sampler, CLIP
 * layer, adapters) follows the profile of the checkpoint that loads, not the path: an SDXL model
 * on an /sd/ path is drawn as SDXL, SDXL-Lightning with its own 8 steps.
 */
export type SdMode = 'text2image' | 'image2image' | 'inpainting' | 'controlnet';

/**
 * How a pipeline's body differs from the shared shape. `presetStyle`: `style` names a prompt
 * style (`/generate/v1`) instead of the style-aligned strength, and the body has only the fields
 * of that generator's page: no scheduler (the text2image default runs), adapters, controlnets,
 * hires or HiDiffusion, so the servers need none of their nodes, packs or files.
 */
export interface SdOptions {
  readonly presetStyle?: boolean;
}

/**
 * The fields the SD graph reads, its chains' included. Every SD request has the required ones; an
 * optional one is a field some lack: the one-call generators' pages have no scheduler, adapters,
 * controlnets, hires or HiDiffusion, and each mode has its own pictures. A lacking field reads as
 * its default.
 */
export interface SdRequest
  extends LoraFields,
    EmbeddingFields,
    StyleFields,
    StyleAlignedFields,
    ControlnetFields,
    IpAdapterFields,
    UpscaleFields {
  readonly model_id: string | undefined;
  readonly clip_skip: number | undefined;
  readonly negative_prompt: string | null | undefined;
  readonly width: number | undefined;
  readonly height: number | undefined;
  readonly samples: number | undefined;
  readonly num_inference_steps: number | undefined;
  readonly guidance_scale: number | undefined;
  readonly strength: number | undefined;
  readonly scheduler?: string | undefined;
  readonly hires?: boolean | undefined;
  readonly hidiffusion?: boolean | undefined;
  readonly mask_images?: readonly string[] | undefined;
  readonly init_image?: string;
  readonly mask_image?: string;
}

/** The pipelines the SD graph serves: those whose request fits SdRequest. */
export type SdPipeline = PipelinesReading<SdRequest>;

/** The path's family: the profile of an id whose own family is not known. */
export type SdPathFamily = 'sd1.5' | 'sdxl';

/**
 * What the SD pipelines take no notice of in some modes, as the original's diffusers pipelines took
 * none: text to image (and a controlnet without masks) starts from noise, so there is no picture
 * for `strength` to keep.
 */
const IGNORED_STRENGTH = {
  strength:
    'applies where a picture is repainted (image2image, inpainting, a controlnet with mask_images); this one starts from noise, so the model takes no notice of it',
};

/** Why a model of a family these graphs cannot draw is refused. */
const NOT_SD =
  'is not a model these paths draw: they draw SD1.5 and SDXL checkpoints (Lightning and Turbo included)';

/** Where each other architecture is served. */
const SERVED_AT: Readonly<Record<string, string>> = {
  sd3: 'use /sd3/v1 or /sd3_5/v1',
  flux: 'use /generate/v3',
};

/** The contract's `base_model` of each SD architecture: what the owner's LoRAs must be of. */
const BASE_MODEL: Readonly<Record<Family, string>> = { sd: 'sd1.5', sdxl: 'sdxl' };

function fromPicture(mode: SdMode): boolean {
  return mode === 'image2image' || mode === 'inpainting';
}

/**
 * Whether a controlnet request repaints its first control picture through `mask_images` (masked
 * controlnet inpainting, as diffusers' ControlNet inpaint pipelines do): the picture is then
 * worked on as inpainting is, the controlnets guiding what is painted under the masks.
 */
function masksControlPicture(mode: SdMode, input: Readonly<Record<string, unknown>>): boolean {
  return mode === 'controlnet' && Array.isArray(input.mask_images) && input.mask_images.length > 0;
}

/** Whether the graph repaints a picture (so `strength` is its denoise): image2image, inpainting, a masked controlnet. */
function repaints(mode: SdMode, input: Readonly<Record<string, unknown>>): boolean {
  return fromPicture(mode) || masksControlPicture(mode, input);
}

/**
 * The profile the graph draws with, or a refusal: the model's where what is known says it (its
 * inpainting checkpoint's on the inpainting paths), else the path's; a model no SD graph draws
 * (SD3, Flux) is refused naming `model_id`.
 */
function sdProfile(
  ctx: AdmitContext & Pick<CompileContext, 'models'>,
  pathFamily: SdPathFamily,
  mode: SdMode,
): { profile: ModelProfile } | { refusal: SubmissionRefusal } {
  const id = typeof ctx.input.model_id === 'string' ? ctx.input.model_id : '';
  const known = knownProfile(ctx, id);
  if (known && known.adapters === null) {
    const where = SERVED_AT[known.architecture];
    return {
      refusal: {
        field: 'model_id',
        message: `'${id}' ${NOT_SD}; it is an ${known.name} model${where ? `: ${where}` : ''}`,
        type: MODEL_FAMILY_ERROR,
      },
    };
  }
  return { profile: profileOf(ctx, id, pathFamily, mode === 'inpainting' ? 'inpainting' : undefined) };
}

/** The adapters' family of an SD profile (never null: sdProfile refuses the others). */
function familyOf(profile: ModelProfile): Family {
  return profile.adapters ?? 'sd';
}

/** The picture that frames the answer: the one started from, or the first control picture. */
function framingPicture(
  ctx: CompileContext,
  fields: RequestFields<SdRequest>,
  mode: SdMode,
): Size | undefined {
  if (fromPicture(mode)) return inputSize(ctx, 'init_image');
  if (fields.list('controlnets').length === 0) return undefined;
  return firstInputSize(ctx, mode === 'controlnet' ? 'init_images' : 'control_image');
}

/**
 * The masks of a masked controlnet as one (white: repaint): each scaled to the picture's size where
 * it is known, then joined, so a part white in any mask is repainted.
 */
function joinMasks(w: Workflow, uploaded: readonly string[], size: Size | undefined): Link<'MASK'> {
  const masks = uploaded.map((name) => (size ? loadMaskAt(w, name, size) : loadMask(w, name)));
  return masks
    .slice(1)
    .reduce(
      (joined, next) =>
        w.node('MaskComposite', { destination: joined, source: next, x: 0, y: 0, operation: 'add' }).out(0),
      masks[0]!,
    );
}

export function compileStableDiffusion(
  pipeline: SdPipeline,
  pathFamily: SdPathFamily,
  mode: SdMode,
  ctx: CompileContext,
  options: SdOptions = {},
): CompiledWorkflow {
  const fields = new RequestFields<SdRequest>(pipeline, ctx);
  const masked = masksControlPicture(mode, ctx.input);
  const picture = repaints(mode, ctx.input);
  // What the API refuses at submission, refused first and in the same order and words.
  const refusal = sdRefusal(ctx, pipeline, pathFamily, mode);
  if (refusal) fields.refuse(refusal.field as keyof SdRequest & string, refusal.message);
  const chosen = sdProfile(ctx, pathFamily, mode);
  if ('refusal' in chosen) return fields.refuse('model_id', chosen.refusal.message);
  const { profile } = chosen;
  const family = familyOf(profile);
  const base = BASE_MODEL[family];
  const w = new Workflow(ctx.filenamePrefix);
  const settings = modelSettings(w, profile, fields, ctx);
  if (!picture) fields.ignoreUnlessDefault(w, IGNORED_STRENGTH);
  const checkpoint = loadCheckpoint(
    w,
    checkpointFile(ctx, fields.string('model_id'), base, mode === 'inpainting' ? 'inpainting' : undefined),
  );
  const clip = skipClipLayers(w, checkpoint.clip, fields.optionalNumber('clip_skip'), profile.clipLayer ?? 1);
  const lora = applyLoras(w, fields, { model: checkpoint.model, clip }, base);
  const { model, clip: encoder } = applyLcm(w, settings, lora);
  const prompts = withEmbeddings(
    fields,
    options.presetStyle
      ? styledPrompts(fields)
      : { positive: fields.string('prompt'), negative: fields.string('negative_prompt') },
    base,
  );
  let conditioning = encodePrompts(w, encoder, prompts.positive, prompts.negative);

  // A picture to start from, or one that guides, frames the answer: its proportions over the
  // requested area, never cropped to the requested shape.
  const requested = { width: fields.number('width'), height: fields.number('height') };
  const target = framedSize(framingPicture(ctx, fields, mode), requested);
  const hires = fields.bool('hires');
  const hidiffusion = fields.bool('hidiffusion');
  const answer = hires ? timesSize(target, HIRES_SCALE) : target;
  const plan = planSizes(profile, target, answer, { hires, direct: hidiffusion });

  const samples = fields.number('samples');
  let patched = options.presetStyle ? model : applyStyleAlignment(w, fields, model, samples);
  patched = applyIpAdapters(w, fields, family, patched, plan.first);
  if (hidiffusion) patched = applyHidiffusion(w, family, patched, plan.first);
  const controls =
    mode === 'controlnet'
      ? controlUnits(w, fields, family, 'init_images', fields.images('init_images'))
      : controlUnits(
          w,
          fields,
          family,
          'control_image',
          fields.has('control_image') ? [fields.image('control_image')] : [],
        );
  conditioning = applyControlnets(w, conditioning, checkpoint.vae, controls);

  let latent: Link<'LATENT'>;
  let original: Link<'IMAGE'> | undefined;
  let mask: Link<'MASK'> | undefined;
  const originalSize = masked ? firstInputSize(ctx, 'init_images') : inputSize(ctx, 'init_image');
  if (mode === 'image2image') {
    const pixels = scaleImage(w, loadImage(w, fields.image('init_image')), plan.first);
    latent = encodeImage(w, pixels, checkpoint.vae, samples);
  } else if (mode === 'inpainting' || masked) {
    original = loadImage(w, masked ? fields.images('init_images')[0]! : fields.image('init_image'));
    const painted = masked
      ? joinMasks(w, fields.images('mask_images'), originalSize)
      : loadMask(w, fields.image('mask_image'));
    mask = softenMask(w, painted, originalSize);
    const pixels = scaleImage(w, original, plan.first);
    ({ latent, ...conditioning } = inpaint(w, conditioning, checkpoint.vae, pixels, mask, samples));
  } else {
    latent = w.node('EmptyLatentImage', { ...plan.first, batch_size: samples }).out(0);
  }

  // A second pass never changes a started-from picture more than `strength` allows.
  const strength = picture ? fields.number('strength') : 1;
  const { image, size } = samplePasses(w, {
    sampler: {
      model: patched,
      seed: ctx.seed,
      steps: settings.steps,
      cfg: settings.cfg,
      sampler_name: settings.sampler_name,
      scheduler: settings.scheduler,
      ...conditioning,
    },
    vae: checkpoint.vae,
    latent,
    denoise: strength,
    plan,
    secondDenoise: Math.min(HIRES_DENOISE, strength),
    ...(mask ? { mask } : {}),
  });
  const answered =
    original && mask
      ? compositeOver(w, { original, originalSize, painted: image, paintedSize: size, mask, samples })
      : scaleTo(w, image, size, answer);
  w.save(applyUpscaleField(w, fields, answered));
  return w.compiled();
}

/**
 * What the SD pipelines refuse at submission, in the compile's words: a model these graphs cannot
 * draw (SD3, Flux), an `ip_adapter` made for another family than the model's, and settings past
 * what a distilled model (Lightning, Turbo, the LCM LoRA) samples, where the settings or the
 * request say which model loads. A model of the other SD family is not refused: it brings its own
 * family's controlnets and adapters.
 */
export function sdRefusal(
  ctx: AdmitContext & Pick<CompileContext, 'models'>,
  pipeline: SdPipeline,
  pathFamily: SdPathFamily,
  mode: SdMode,
): SubmissionRefusal | null {
  const chosen = sdProfile(ctx, pathFamily, mode);
  if ('refusal' in chosen) return chosen.refusal;
  const names = Array.isArray(ctx.input.ip_adapter) ? (ctx.input.ip_adapter as unknown[]) : [];
  const why = otherFamilyAdapter(
    names.filter((name): name is string => typeof name === 'string'),
    familyOf(chosen.profile),
  );
  if (why) return { field: 'ip_adapter', message: why, type: MODEL_FAMILY_ERROR };
  // An owner's model the submission cannot see is drawn with its own family's settings: its
  // compile decides.
  if (!profileDecided(ctx, typeof ctx.input.model_id === 'string' ? ctx.input.model_id : '')) return null;
  return settingsRefusal(chosen.profile, new RequestFields<SdRequest>(pipeline, ctx), ctx);
}

/** What the SD pipelines of one family and mode need on the server. */
export function stableDiffusionRequirements(
  pipeline: SdPipeline,
  pathFamily: SdPathFamily,
  mode: SdMode,
  options: SdOptions = {},
): ServerRequirements {
  const full = !options.presetStyle;
  const start = {
    text2image: ['EmptyLatentImage'],
    controlnet: ['EmptyLatentImage'],
    image2image: nodeClasses(IMAGE_NODES.sized, IMAGE_NODES.encode),
    inpainting: nodeClasses(IMAGE_NODES.mask, SOFT_MASK_NODES, INPAINT_NODES, COMPOSITE_NODES),
  } as const satisfies Record<SdMode, readonly NodeClass[]>;
  // A controlnet with mask_images repaints its first picture as inpainting does.
  const maskedControl =
    mode === 'controlnet'
      ? nodeClasses(IMAGE_NODES.sizedMask, ['MaskComposite'], start.inpainting, MASKED_SECOND_PASS_NODES)
      : [];
  // A model of either family may run on either path: both families' adapters may load.
  const nodes = nodeClasses(
    CHECKPOINT_DIFFUSION_NODES,
    CLIP_SKIP_NODES,
    LORA_NODES,
    full ? LCM_NODES : [],
    full ? CONTROLNET_NODES : [],
    // The request's shape decides the adapters' nodes (only SDXL requests carry masks).
    full ? ipAdapterNodes(pathFamily === 'sd1.5' ? 'sd' : 'sdxl') : [],
    full ? HIDIFFUSION_NODES : [],
    full ? STYLE_ALIGNED_NODES : [],
    start[mode],
    maskedControl,
    PASS_NODES,
    // A started-from picture's second pass may run below the latent upscale's strength.
    mode === 'inpainting'
      ? MASKED_SECOND_PASS_NODES
      : mode === 'image2image'
        ? SECOND_PASS_NODES
        : ['LatentUpscale'],
    EXACT_SIZE_NODES,
    pathFamily === 'sd1.5' ? UPSCALE_NODES : [],
  );
  const defaultModel = pathFamily;
  const fields = requestFieldNames(pipeline);
  return {
    nodes,
    ...(full
      ? {
          packs: packNeeds(
            { pack: 'comfyui_controlnet_aux', when: 'only with `controlnets` naming `openpose` or `depth`' },
            { pack: 'ComfyUI_IPAdapter_plus', when: 'only with `ip_adapter`' },
            { pack: 'comfyui_jankhidiffusion', when: 'only with `hidiffusion: true`' },
            { pack: 'style_aligned_comfy', when: 'only with `attn` or `adain` true, or a `style`' },
          ),
        }
      : {}),
    refuses: [
      { field: 'model_id', why: NOT_SD },
      ...settingsRefusals('steps', 'cfg', ...(fields.includes('scheduler') ? (['lcm'] as const) : [])),
      ...(full ? IP_ADAPTER_REFUSALS : []),
    ],
    ignores: [
      ...(fromPicture(mode) ? [] : refusals(IGNORED_STRENGTH)),
      ...(full
        ? [
            ...controlnetIgnores(mode === 'controlnet' ? 'init_images' : 'control_image'),
            ...ipAdapterIgnores(pathFamily === 'sd1.5' ? 'sd' : 'sdxl'),
          ]
        : []),
      ...(full
        ? [
            { field: 'attn', why: ATTENTION_ALWAYS_SHARED },
            ...(['attn', 'adain', 'style'] as const).map((field) => ({ field, why: NOTHING_TO_ALIGN })),
          ]
        : []),
    ],
    models: [
      {
        folder: 'checkpoints',
        what:
          `the checkpoint of \`model_id\`: \`${DEFAULT_CHECKPOINTS[defaultModel]}\` for \`${defaultModel}\` (the default), or the file \`COMFYUI_CHECKPOINTS\` maps the id to` +
          (mode === 'inpainting'
            ? `; where it maps the model's inpainting role (\`${defaultModel}:inpainting\`, or the id's own), that file instead`
            : ''),
      },
      {
        folder: 'loras',
        what:
          'each file `lora_models` names (`.safetensors` added to a name without extension)' +
          (full
            ? '; with `scheduler: "LCMScheduler"`, the LCM LoRA `COMFYUI_CHECKPOINTS` maps (`sd1.5:lcm`, `sdxl:lcm`)'
            : ''),
      },
      { folder: 'embeddings', what: 'each textual inversion `embeddings` names' },
      ...(full
        ? [
            {
              folder: 'controlnet',
              what: Object.entries(CONTROLNET_FILES[pathFamily === 'sd1.5' ? 'sd' : 'sdxl'])
                .map(([name, file]) => `\`${file}\` for \`controlnets: ["${name}"]\``)
                .join(', '),
            },
            {
              folder: 'ipadapter',
              what: `the adapter \`ip_adapter\` names: ${ipAdapterFiles(pathFamily, 'file')}`,
            },
            { folder: 'clip_vision', what: `its image encoder: ${ipAdapterFiles(pathFamily, 'clipVision')}` },
          ]
        : []),
      ...(pathFamily === 'sd1.5'
        ? [{ folder: 'upscale_models', what: `\`${GENERAL_UPSCALER.file}\` for \`upscale\`` }]
        : []),
      ...(fromPicture(mode) || mode === 'controlnet' ? [SECOND_PASS_UPSCALER_NEED] : []),
    ],
  };
}

/** The adapter (or encoder) files of a family's IP-Adapters, for the requirements. */
function ipAdapterFiles(family: SdPathFamily, which: 'file' | 'clipVision'): string {
  const tag = family === 'sd1.5' ? 'sd15' : 'sdxl';
  const files = Object.entries(IP_ADAPTER_FILES)
    .filter(([name]) => name.includes(tag))
    .map(([, files]) => `\`${files[which]}\``);
  return [...new Set(files)].join(', ');
}

/** The compiler of one SD pipeline: its family, its mode, and the one graph they share. */
export function stableDiffusionCompiler(
  pipeline: SdPipeline,
  family: SdPathFamily,
  mode: SdMode,
  options: SdOptions = {},
): PipelineCompiler {
  return {
    pipeline,
    requires: stableDiffusionRequirements(pipeline, family, mode, options),
    admit: (ctx) => sdRefusal(ctx, pipeline, family, mode),
    compile: (ctx) => compileStableDiffusion(pipeline, family, mode, ctx, options),
  };
}
