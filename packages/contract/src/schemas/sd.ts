import Type, { type TSchema } from 'typebox';
import {
  Bool,
  CommonFields,
  Enum,
  ImageUrl,
  ImageUrlList,
  Int,
  List,
  ModelHash,
  Nullable,
  Num,
  SafetyCheckerField,
  Scheduler,
} from './common.ts';

/** Stable Diffusion 1.5 and SDXL request schemas, with the API reference's bounds. */

const opt = Type.Optional;

const CONTROLNETS = ['openpose', 'canny', 'depth'] as const;
const IP_ADAPTERS_SD15 = ['ip-adapter_sd15_light', 'ip-adapter_sd15', 'ip-adapter-plus_sd15'] as const;
const IP_ADAPTERS_SDXL = [
  'ip-adapter_sdxl',
  'ip-adapter_sdxl_vit-h',
  'ip-adapter-plus_sdxl_vit-h',
  'ip-adapter-plus-face_sdxl_vit-h',
] as const;

type Family = 'sd' | 'sdxl';

const FAMILY = {
  sd: { modelId: 'sd1.5', size: 512, controlnetWeightMax: 2 },
  sdxl: { modelId: 'sdxl', size: 1024, controlnetWeightMax: 1 },
} as const;

interface DiffusionOptions {
  scheduler: 'EulerDiscreteScheduler' | 'UniPCMultistepScheduler';
  steps?: number;
  samples?: number;
  clipSkip?: number;
  /** SDXLGenPrompt: negative prompt, lora, embeddings and ip_adapter fields may be null. */
  nullableLists?: boolean;
}

function ipAdapter(family: Family): TSchema {
  if (family === 'sdxl') return Enum(IP_ADAPTERS_SDXL);
  return Type.Union([Enum(IP_ADAPTERS_SD15), ModelHash], {
    description: 'A named SD1.5 IP-Adapter, or the hash of an uploaded adapter.',
  });
}

/** The optional fields text2image, image2image, inpainting and the controlnet prompts share. */
function diffusionFields(family: Family, o: DiffusionOptions) {
  const f = FAMILY[family];
  const maybeNull = <T extends TSchema>(s: T) => (o.nullableLists ? Nullable(s) : s);
  const ipImage = family === 'sdxl' ? Type.Union([ImageUrl, ImageUrlList()]) : ImageUrl;
  return {
    model_id: opt(Type.String({ default: f.modelId, description: `Model id; default ${f.modelId}.` })),
    num_inference_steps: opt(Int({ gt: 0, lt: 41, default: o.steps ?? 20 })),
    samples: opt(Int({ gt: 0, le: 4, default: o.samples ?? 1 })),
    clip_skip: opt(Int({ gt: 0, le: 12, ...(o.clipSkip === undefined ? {} : { default: o.clipSkip }) })),
    strength: opt(Num({ gt: 0, le: 1, default: 0.8 })),
    guidance_scale: opt(Num({ gt: 0, le: 20, default: 7.5 })),
    height: opt(Int({ gt: 0, le: 1536, default: f.size })),
    width: opt(Int({ gt: 0, le: 1536, default: f.size })),
    lora_models: opt(maybeNull(List(Type.String()))),
    lora_weights: opt(maybeNull(List(Num({ gt: -10, le: 10 })))),
    embeddings: opt(maybeNull(List(Type.String()))),
    ...SafetyCheckerField,
    ...(family === 'sd'
      ? { upscale: opt(Type.String({ description: "Upscale factor such as '2x'." })) }
      : {}),
    scheduler: opt(Scheduler(o.scheduler)),
    ip_adapter_style_images: opt(maybeNull(ImageUrlList())),
    ip_adapter_image: opt(maybeNull(ipImage)),
    ...(family === 'sdxl' ? { ip_adapter_mask_images: opt(maybeNull(ImageUrlList())) } : {}),
    ip_adapter: opt(maybeNull(List(ipAdapter(family)))),
    ip_adapter_scale: opt(maybeNull(List(Num({ ge: 0, le: 1 })))),
    hires: opt(Bool(false)),
    hidiffusion: opt(Bool(false)),
    controlnets: opt(List(Enum(CONTROLNETS))),
    control_image: opt(ImageUrl),
    controlnet_weights: opt(List(Num({ ge: 0, le: f.controlnetWeightMax }))),
    starting_control_steps: opt(List(Num({ ge: 0, le: 1 }))),
    ending_control_steps: opt(List(Num({ ge: 0, le: 1 }))),
    resolution: opt(Int({ gt: 0, default: 1024 })),
    attn: opt(Bool(undefined)),
    adain: opt(Bool(undefined)),
    style: opt(Num({ ge: 0, le: 1, description: 'Style strength.' })),
  };
}

const prompts = { prompt: Type.String(), negative_prompt: Type.String() };

function text2image(family: Family, title: string) {
  return Type.Object(
    { ...prompts, ...diffusionFields(family, { scheduler: 'EulerDiscreteScheduler' }), ...CommonFields },
    { title, description: `${family === 'sd' ? 'Stable Diffusion 1.5' : 'SDXL'} text to image.` },
  );
}

function image2image(family: Family, title: string) {
  return Type.Object(
    {
      ...prompts,
      init_image: ImageUrl,
      ...diffusionFields(family, { scheduler: 'UniPCMultistepScheduler' }),
      ...CommonFields,
    },
    { title },
  );
}

function inpainting(family: Family, title: string) {
  return Type.Object(
    {
      ...prompts,
      init_image: ImageUrl,
      mask_image: ImageUrl,
      ...diffusionFields(family, { scheduler: 'UniPCMultistepScheduler' }),
      ...CommonFields,
    },
    { title },
  );
}

function controlnet(family: Family, title: string) {
  const {
    control_image: _unused,
    controlnets: _default,
    ...rest
  } = diffusionFields(family, {
    scheduler: 'UniPCMultistepScheduler',
  });
  return Type.Object(
    {
      ...prompts,
      init_images: ImageUrlList('Control images, one per controlnet.'),
      mask_images: opt(ImageUrlList()),
      controlnets: opt(List(Enum(CONTROLNETS), { default: ['canny'] })),
      ...rest,
      ...CommonFields,
    },
    { title },
  );
}

export const Text2ImagePromptSD = text2image('sd', 'Text2ImagePromptSD');
export const Text2ImagePromptSDXL = text2image('sdxl', 'Text2ImagePromptSDXL');
export const Image2ImagePromptSD = image2image('sd', 'Image2ImagePromptSD');
export const Image2ImagePromptSDXL = image2image('sdxl', 'Image2ImagePromptSDXL');
export const InpaintingPromptSD = inpainting('sd', 'InpaintingPromptSD');
export const InpaintingPromptSDXL = inpainting('sdxl', 'InpaintingPromptSDXL');
export const ControlnetPromptSD = controlnet('sd', 'ControlnetPromptSD');
export const ControlnetPromptSDXL = controlnet('sdxl', 'ControlnetPromptSDXL');

/** Generate v1: the SDXL text2image fields, looser nulls and its own defaults. */
export const SDXLGenPrompt = Type.Object(
  {
    prompt: Type.String(),
    negative_prompt: opt(Nullable(Type.String(), { default: null })),
    ...diffusionFields('sdxl', {
      scheduler: 'UniPCMultistepScheduler',
      samples: 4,
      steps: 30,
      clipSkip: 2,
      nullableLists: true,
    }),
    ...CommonFields,
  },
  { title: 'SDXLGenPrompt' },
);
