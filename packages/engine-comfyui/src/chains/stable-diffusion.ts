import type { SubmissionRefusal } from '@imagegen/engines';
import type {
  AdmitContext,
  CompileContext,
  CompiledWorkflow,
  PipelineCompiler,
  ServerRequirements,
} from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';
import {
  applyControlnets,
  CONTROLNET_FILES,
  CONTROLNET_NODES,
  CONTROLNET_REFUSALS,
  type ControlnetFields,
  controlUnits,
  type Family,
} from './controlnet-stack.ts';
import { applyHidiffusion, HIDIFFUSION_NODES } from './hidiffusion.ts';
import { HIRES_FIX, HIRES_NODES, hiresPass } from './hires-fix.ts';
import { EXACT_SIZE_NODES, framedSize, inputSize, SD_GRID, samplingSize, scaleTo } from './image-size.ts';
import { INPAINT_NODES, inpaint } from './inpainting.ts';
import { encodeImage, IMAGE_NODES, loadImageAt, loadMaskAt } from './input-images.ts';
import {
  applyIpAdapters,
  IP_ADAPTER_FILES,
  IP_ADAPTER_REFUSALS,
  type IpAdapterFields,
  ipAdapterNodes,
  otherFamilyAdapter,
} from './ip-adapter.ts';
import { applyLoras, LORA_NODES, type LoraFields } from './lora-stack.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  DEFAULT_CHECKPOINTS,
  familyOfModel,
  loadCheckpoint,
  MODEL_FAMILY_ERROR,
} from './model-files.ts';
import {
  CLIP_SKIP_NODES,
  type EmbeddingFields,
  encodePrompts,
  skipClipLayers,
  withEmbeddings,
} from './prompt-encoding.ts';
import { type StyleFields, styledPrompts } from './prompt-styles.ts';
import { type PipelinesReading, RequestFields, refusals } from './request-fields.ts';
import { samplingFor } from './schedulers.ts';
import { applyUpscaleField, GENERAL_UPSCALER, UPSCALE_NODES, type UpscaleFields } from './upscaling.ts';

/**
 * The Stable Diffusion 1.5 and SDXL pipelines (text2image, image2image, inpainting, controlnet and
 * the one-call generators) share one request shape and one graph: checkpoint, clip_skip, LoRAs,
 * prompts with embeddings, a starting latent per mode, controlnets, the sampler, hires, exact
 * size, upscale.
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
  readonly attn?: boolean | undefined;
  readonly adain?: boolean | undefined;
  readonly mask_images?: readonly string[] | undefined;
  readonly init_image?: string;
  readonly mask_image?: string;
}

/** The pipelines the SD graph serves: those whose request fits SdRequest. */
export type SdPipeline = PipelinesReading<SdRequest>;

/** The sampler of a body without `scheduler`: the text2image default. */
const DEFAULT_SCHEDULER = 'EulerDiscreteScheduler';

const NODE_PACK = (what: string, pack: string) =>
  `needs ${what} from a ComfyUI node pack (${pack}), which this engine does not use yet`;

/** Fields of the shared SD request shape no graph of this engine can honour. */
const NOT_SERVED = {
  attn: NODE_PACK('style-aligned attention sharing', 'style_aligned_comfy'),
  adain: NODE_PACK('style-aligned AdaIN', 'style_aligned_comfy'),
  style: NODE_PACK('style-aligned generation', 'style_aligned_comfy'),
  mask_images: 'masks for controlnet inpainting are not served by this engine; use /sd/inpainting/v1',
};

/** The fields a pipeline refuses: a preset body has none of NOT_SERVED's but `style`, which it applies. */
function notServed(options: SdOptions): Partial<typeof NOT_SERVED> {
  return options.presetStyle ? {} : NOT_SERVED;
}

/** The contract's `base_model` of each family's graphs. */
const BASE_MODEL_OF_FAMILY: Readonly<Record<Family, string>> = { sd: 'sd1.5', sdxl: 'sdxl' };

const NO_INIT_IMAGE =
  'applies to image2image and inpainting; this pipeline starts from noise, not from a picture';

export function compileStableDiffusion(
  pipeline: SdPipeline,
  pipelineFamily: Family,
  mode: SdMode,
  ctx: CompileContext,
  options: SdOptions = {},
): CompiledWorkflow {
  const fields = new RequestFields<SdRequest>(pipeline, ctx);
  fields.refuseUnlessDefault(notServed(options));
  const fromPicture = mode === 'image2image' || mode === 'inpainting';
  if (!fromPicture) fields.refuseUnlessDefault({ strength: NO_INIT_IMAGE });

  const w = new Workflow(ctx.filenamePrefix);
  // A built-in model id of the other family (`model_id: "sdxl"` on an /sd/ path) brings its own
  // family's controlnets, adapters and CLIP layers: one family's adapters on the other's model
  // draw nothing useful. The owner's models the request names must be of the graph's base model.
  // The same holds for an id of the operator's whose family COMFYUI_CHECKPOINTS declares.
  const family = modelFamily(ctx, pipelineFamily);
  const base = BASE_MODEL_OF_FAMILY[family];
  // Inpainting loads the model's inpainting checkpoint where COMFYUI_CHECKPOINTS maps one.
  const role = mode === 'inpainting' ? 'inpainting' : undefined;
  const checkpoint = loadCheckpoint(w, checkpointFile(ctx, fields.string('model_id'), base, role));
  const clipSkip = fields.optionalNumber('clip_skip');
  const { model, clip } = applyLoras(
    w,
    fields,
    { model: checkpoint.model, clip: skipClipLayers(w, checkpoint.clip, clipSkip, family) },
    base,
  );
  const prompts = withEmbeddings(
    fields,
    options.presetStyle
      ? styledPrompts(fields)
      : { positive: fields.string('prompt'), negative: fields.string('negative_prompt') },
    base,
  );
  let conditioning = encodePrompts(w, clip, prompts.positive, prompts.negative);

  const requested = { width: fields.number('width'), height: fields.number('height') };
  // A picture to start from keeps its framing: its proportions over the requested area.
  const target = fromPicture ? framedSize(inputSize(ctx, 'init_image'), requested, SD_GRID) : requested;
  const size = samplingSize(target, SD_GRID);
  let patched = applyIpAdapters(w, fields, family, model, size);
  if (fields.bool('hidiffusion')) patched = applyHidiffusion(w, family, patched, target);
  const samples = fields.number('samples');
  const controls =
    mode === 'controlnet'
      ? controlUnits(fields, family, 'init_images', fields.images('init_images'))
      : controlUnits(
          fields,
          family,
          'control_image',
          fields.has('control_image') ? [fields.image('control_image')] : [],
        );
  conditioning = applyControlnets(w, conditioning, checkpoint.vae, controls);

  let latent: Link<'LATENT'>;
  if (mode === 'image2image') {
    latent = encodeImage(w, loadImageAt(w, fields.image('init_image'), size), checkpoint.vae, samples);
  } else if (mode === 'inpainting') {
    const pixels = loadImageAt(w, fields.image('init_image'), size);
    const mask = loadMaskAt(w, fields.image('mask_image'), size);
    ({ latent, ...conditioning } = inpaint(w, conditioning, checkpoint.vae, pixels, mask, samples));
  } else {
    latent = w.node('EmptyLatentImage', { ...size, batch_size: samples }).out(0);
  }

  const sampler = {
    model: patched,
    seed: ctx.seed,
    steps: fields.number('num_inference_steps'),
    cfg: fields.number('guidance_scale'),
    ...samplingFor(fields.string('scheduler') || DEFAULT_SCHEDULER),
    ...conditioning,
  };
  latent = w.sample({
    ...sampler,
    latent_image: latent,
    denoise: fromPicture ? fields.number('strength') : 1,
  });
  let sampled = size;
  let answer = target;
  if (fields.bool('hires')) {
    // The second pass never changes a started-from picture more than `strength` allows.
    const denoise = fromPicture ? Math.min(HIRES_FIX.denoise, fields.number('strength')) : HIRES_FIX.denoise;
    ({ latent, size: sampled } = hiresPass(w, sampler, latent, size, denoise));
    answer = {
      width: Math.round(target.width * HIRES_FIX.scale),
      height: Math.round(target.height * HIRES_FIX.scale),
    };
  }
  const decoded = w.node('VAEDecode', { samples: latent, vae: checkpoint.vae }).out(0);
  w.save(applyUpscaleField(w, fields, scaleTo(w, decoded, sampled, answer)));
  return w.compiled();
}

/** The family the graph follows: the model's where the settings know it, else the pipeline's. */
function modelFamily(ctx: AdmitContext, pipelineFamily: Family): Family {
  const id = typeof ctx.input.model_id === 'string' ? ctx.input.model_id : '';
  return familyOfModel(id, ctx.families) ?? pipelineFamily;
}

/**
 * What the SD pipelines refuse at submission: an `ip_adapter` made for another family than the
 * model's, where that family is known (a built-in id, or one COMFYUI_CHECKPOINTS declares). A
 * model of the other family is not refused: it brings its own family's controlnets and adapters.
 */
export function admitStableDiffusion(ctx: AdmitContext, pipelineFamily: Family): SubmissionRefusal | null {
  const names = Array.isArray(ctx.input.ip_adapter) ? (ctx.input.ip_adapter as unknown[]) : [];
  const why = otherFamilyAdapter(
    names.filter((name): name is string => typeof name === 'string'),
    modelFamily(ctx, pipelineFamily),
  );
  return why ? { field: 'ip_adapter', message: why, type: MODEL_FAMILY_ERROR } : null;
}

/** What the SD pipelines of one family and mode need on the server. */
export function stableDiffusionRequirements(
  family: Family,
  mode: SdMode,
  options: SdOptions = {},
): ServerRequirements {
  const defaultModel = family === 'sd' ? 'sd1.5' : 'sdxl';
  const full = !options.presetStyle;
  const start = {
    text2image: ['EmptyLatentImage'],
    controlnet: ['EmptyLatentImage'],
    image2image: nodeClasses(IMAGE_NODES.sized, IMAGE_NODES.encode),
    inpainting: nodeClasses(IMAGE_NODES.mask, INPAINT_NODES),
  } as const satisfies Record<SdMode, readonly NodeClass[]>;
  const nodes = nodeClasses(
    CHECKPOINT_DIFFUSION_NODES,
    CLIP_SKIP_NODES,
    LORA_NODES,
    full ? CONTROLNET_NODES : [],
    full ? ipAdapterNodes(family) : [],
    full ? HIDIFFUSION_NODES : [],
    start[mode],
    full ? HIRES_NODES : [],
    EXACT_SIZE_NODES,
    family === 'sd' ? UPSCALE_NODES : [],
  );
  const fromPicture = mode === 'image2image' || mode === 'inpainting';
  return {
    nodes,
    ...(full
      ? {
          packs: packNeeds(
            { pack: 'comfyui_controlnet_aux', when: 'only with `controlnets` naming `openpose` or `depth`' },
            { pack: 'ComfyUI_IPAdapter_plus', when: 'only with `ip_adapter`' },
            { pack: 'comfyui_jankhidiffusion', when: 'only with `hidiffusion: true`' },
          ),
        }
      : {}),
    refuses: [
      ...refusals(notServed(options)),
      ...(fromPicture ? [] : refusals({ strength: NO_INIT_IMAGE })),
      ...(full ? [...IP_ADAPTER_REFUSALS, ...CONTROLNET_REFUSALS] : []),
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
        what: 'each file `lora_models` names (`.safetensors` added to a name without extension)',
      },
      { folder: 'embeddings', what: 'each textual inversion `embeddings` names' },
      ...(full
        ? [
            {
              folder: 'controlnet',
              what: Object.entries(CONTROLNET_FILES[family])
                .map(([name, file]) => `\`${file}\` for \`controlnets: ["${name}"]\``)
                .join(', '),
            },
            {
              folder: 'ipadapter',
              what: `the adapter \`ip_adapter\` names: ${ipAdapterFiles(family, 'file')}`,
            },
            { folder: 'clip_vision', what: `its image encoder: ${ipAdapterFiles(family, 'clipVision')}` },
          ]
        : []),
      ...(family === 'sd'
        ? [{ folder: 'upscale_models', what: `\`${GENERAL_UPSCALER.file}\` for \`upscale\`` }]
        : []),
    ],
  };
}

/** The adapter (or encoder) files of a family's IP-Adapters, for the requirements. */
function ipAdapterFiles(family: Family, which: 'file' | 'clipVision'): string {
  const tag = family === 'sd' ? 'sd15' : 'sdxl';
  const files = Object.entries(IP_ADAPTER_FILES)
    .filter(([name]) => name.includes(tag))
    .map(([, files]) => `\`${files[which]}\``);
  return [...new Set(files)].join(', ');
}

/** The compiler of one SD pipeline: its family, its mode, and the one graph they share. */
export function stableDiffusionCompiler(
  pipeline: SdPipeline,
  family: Family,
  mode: SdMode,
  options: SdOptions = {},
): PipelineCompiler {
  return {
    pipeline,
    requires: stableDiffusionRequirements(family, mode, options),
    admit: (ctx) => admitStableDiffusion(ctx, family),
    compile: (ctx) => compileStableDiffusion(pipeline, family, mode, ctx, options),
  };
}
