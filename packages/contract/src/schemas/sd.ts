import Type, { type TNull, type TProperties, type TSchema, type TUnion } from 'typebox';
import {
  Bool,
  CommonFields,
  Enum,
  ImageUrl,
  ImageUrlList,
  Int,
  List,
  ListSkippingEmpty,
  ModelHash,
  Nullable,
  Num,
  OptionalImageUrl,
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

interface DiffusionOptions<N extends boolean> {
  scheduler: 'EulerDiscreteScheduler' | 'UniPCMultistepScheduler';
  steps?: number;
  samples?: number;
  clipSkip?: number;
  /** SDXLGenPrompt: negative prompt, lora, embeddings and ip_adapter fields may be null. */
  nullableLists?: N;
}

/** `schema`, or `schema` or null when the lists of the request may be null. */
type OrNull<N extends boolean, T extends TSchema> = N extends true ? TUnion<[T, TNull]> : T;

/** FAMILY's `key` for `family`, typed for that family alone: a bound stays a literal in the schema's type. */
function familyValue<F extends Family, K extends keyof (typeof FAMILY)[Family]>(family: F, key: K) {
  return FAMILY[family][key] as (typeof FAMILY)[F][K];
}

/**
 * The choice for `family` out of one per family. Typed per family (not as the union of both), so
 * each request schema's static type lists exactly its own fields: the SDK derives its types from it.
 */
function byFamily<F extends Family, T extends Record<Family, unknown>>(family: F, choices: T): T[F] {
  return choices[family];
}

const ipAdapterSd = Type.Union([Enum(IP_ADAPTERS_SD15), ModelHash], {
  description: 'A named SD1.5 IP-Adapter, or the hash of an uploaded adapter.',
});

/** The optional fields text2image, image2image, inpainting and the controlnet prompts share. */
function diffusionFields<F extends Family, N extends boolean = false>(family: F, o: DiffusionOptions<N>) {
  const f = FAMILY[family];
  const maybeNull = <T extends TSchema>(s: T) => (o.nullableLists ? Nullable(s) : s) as OrNull<N, T>;
  const ipImage = byFamily(family, {
    sd: OptionalImageUrl,
    sdxl: Type.Union([OptionalImageUrl, ImageUrlList()]),
  });
  const ipAdapter = byFamily(family, { sd: ipAdapterSd, sdxl: Enum(IP_ADAPTERS_SDXL) });
  return {
    model_id: opt(Type.String({ default: f.modelId, description: `Model id; default ${f.modelId}.` })),
    num_inference_steps: opt(Int({ gt: 0, lt: 41, default: o.steps ?? 20 })),
    samples: opt(Int({ gt: 0, le: 4, default: o.samples ?? 1 })),
    clip_skip: opt(
      Int({
        gt: 0,
        le: 12,
        ...(o.clipSkip === undefined ? {} : { default: o.clipSkip }),
        description: byFamily(family, {
          sd: 'The text-encoder layer the prompt is read from, counted from the end as A1111 counts: 1 is the last layer (the model reads it by default), 2 the one before it.',
          sdxl: "The text-encoder layer the prompt is read from, counted from the end: SDXL already reads the one before the last, so 1 and 2 both keep the model's own layer; 3 and more read deeper.",
        }),
      }),
    ),
    strength: opt(Num({ gt: 0, le: 1, default: 0.8 })),
    guidance_scale: opt(Num({ gt: 0, le: 20, default: 7.5 })),
    height: opt(Int({ gt: 0, le: 1536, default: f.size })),
    width: opt(Int({ gt: 0, le: 1536, default: f.size })),
    lora_models: opt(maybeNull(List(Type.String()))),
    lora_weights: opt(maybeNull(List(Num({ gt: -10, le: 10 })))),
    embeddings: opt(
      maybeNull(
        ListSkippingEmpty(Type.String(), {
          description:
            'Textual inversions; each acts where its name is written, in prompt or negative_prompt (one written in neither is added at the end of prompt).',
        }),
      ),
    ),
    ...SafetyCheckerField,
    ...byFamily(family, {
      sd: { upscale: opt(Type.String({ description: "Upscale factor such as '2x'." })) },
      sdxl: {},
    }),
    scheduler: opt(Scheduler(o.scheduler)),
    ip_adapter_style_images: opt(maybeNull(ListSkippingEmpty(ImageUrl))),
    ip_adapter_image: opt(maybeNull(ipImage)),
    ...byFamily(family, { sd: {}, sdxl: { ip_adapter_mask_images: opt(maybeNull(ImageUrlList())) } }),
    ip_adapter: opt(maybeNull(List(ipAdapter))),
    ip_adapter_scale: opt(maybeNull(List(Num({ ge: 0, le: 1 })))),
    hires: opt(Bool(false)),
    hidiffusion: opt(Bool(false)),
    controlnets: opt(List(Enum(CONTROLNETS))),
    control_image: opt(OptionalImageUrl),
    controlnet_weights: opt(List(Num({ ge: 0, le: familyValue(family, 'controlnetWeightMax') }))),
    starting_control_steps: opt(List(Num({ ge: 0, le: 1 }))),
    ending_control_steps: opt(List(Num({ ge: 0, le: 1 }))),
    resolution: opt(Int({ gt: 0, default: 1024 })),
    attn: opt(
      Bool(
        undefined,
        "Style-aligned generation: every picture of the batch shares the first one's self-attention, and so its style.",
      ),
    ),
    adain: opt(
      Bool(
        undefined,
        "Style-aligned generation: each picture's attention statistics are matched to the first picture's (AdaIN).",
      ),
    ),
    style: opt(
      Num({
        ge: 0,
        le: 1,
        description: "Style-aligned generation: how strongly the first picture's style weighs in the others.",
      }),
    ),
  };
}

const prompts = { prompt: Type.String(), negative_prompt: Type.String() };

/*
 * The builders take the family's fields already made (not the family), so each schema's static
 * type is computed for one family: the SDK types requests from it.
 */

function text2image<P extends TProperties>(fields: P, title: string, description: string) {
  return Type.Object({ ...prompts, ...fields, ...CommonFields }, { title, description });
}

function image2image<P extends TProperties>(fields: P, title: string) {
  return Type.Object({ ...prompts, init_image: ImageUrl, ...fields, ...CommonFields }, { title });
}

function inpainting<P extends TProperties>(fields: P, title: string) {
  return Type.Object(
    { ...prompts, init_image: ImageUrl, mask_image: ImageUrl, ...fields, ...CommonFields },
    { title },
  );
}

function controlnet<P extends TProperties>(fields: P, title: string) {
  const { control_image: _unused, controlnets: _default, ...rest } = fields;
  return Type.Object(
    {
      ...prompts,
      init_images: ImageUrlList('Control images, one per controlnet.'),
      mask_images: opt(
        ImageUrlList(
          'Controlnet inpainting: where the first picture of init_images is repainted (white), guided by the controlnets.',
        ),
      ),
      controlnets: opt(List(Enum(CONTROLNETS), { default: ['canny'] })),
      ...rest,
      ...CommonFields,
    },
    { title },
  );
}

const euler = { scheduler: 'EulerDiscreteScheduler' } as const;
const uniPC = { scheduler: 'UniPCMultistepScheduler' } as const;

export const Text2ImagePromptSD = text2image(
  diffusionFields('sd', euler),
  'Text2ImagePromptSD',
  'Stable Diffusion 1.5 text to image.',
);
export const Text2ImagePromptSDXL = text2image(
  diffusionFields('sdxl', euler),
  'Text2ImagePromptSDXL',
  'SDXL text to image.',
);
export const Image2ImagePromptSD = image2image(diffusionFields('sd', uniPC), 'Image2ImagePromptSD');
export const Image2ImagePromptSDXL = image2image(diffusionFields('sdxl', uniPC), 'Image2ImagePromptSDXL');
export const InpaintingPromptSD = inpainting(diffusionFields('sd', uniPC), 'InpaintingPromptSD');
export const InpaintingPromptSDXL = inpainting(diffusionFields('sdxl', uniPC), 'InpaintingPromptSDXL');
export const ControlnetPromptSD = controlnet(diffusionFields('sd', uniPC), 'ControlnetPromptSD');
export const ControlnetPromptSDXL = controlnet(diffusionFields('sdxl', uniPC), 'ControlnetPromptSDXL');

/** The style presets of `/generate/v1`, as its page lists them; the first is the default. */
export const SD_GEN_STYLES = ['realistic_portrait', 'fantasy_art', 'cartoon_anime'] as const;

const sdGen = diffusionFields('sd', {
  scheduler: 'EulerDiscreteScheduler',
  samples: 4,
  steps: 30,
  clipSkip: 2,
  nullableLists: true,
});

/**
 * Generate v1: SD1.5 from a prompt and a style preset, with the Generate v1 defaults (4 samples,
 * 30 steps, clip_skip 2). Its fields are the ones its page lists: no scheduler, adapters or
 * controlnets, and `style` is a preset name, not the style-aligned strength of the SD schemas.
 */
export const SDGenPrompt = Type.Object(
  {
    prompt: Type.String(),
    style: opt(
      Nullable(Enum(SD_GEN_STYLES), {
        default: 'realistic_portrait',
        description: 'A style preset added to the prompt; null for none.',
      }),
    ),
    negative_prompt: opt(Nullable(Type.String(), { default: null })),
    model_id: sdGen.model_id,
    num_inference_steps: sdGen.num_inference_steps,
    samples: sdGen.samples,
    clip_skip: sdGen.clip_skip,
    strength: sdGen.strength,
    guidance_scale: sdGen.guidance_scale,
    height: sdGen.height,
    width: sdGen.width,
    lora_models: sdGen.lora_models,
    lora_weights: sdGen.lora_weights,
    embeddings: sdGen.embeddings,
    safety_checker: sdGen.safety_checker,
    upscale: sdGen.upscale,
    ...CommonFields,
  },
  {
    title: 'SDGenPrompt',
    description: 'Generate v1: Stable Diffusion 1.5 from a prompt and a style preset.',
  },
);

/** Generate v2: the SDXL text2image fields with looser nulls; negative_prompt may be left out. */
export const SDXLGenPrompt = Type.Object(
  {
    prompt: Type.String(),
    negative_prompt: opt(Nullable(Type.String(), { default: null })),
    ...diffusionFields('sdxl', { scheduler: 'UniPCMultistepScheduler', nullableLists: true }),
    ...CommonFields,
  },
  { title: 'SDXLGenPrompt', description: 'Generate v2: SDXL from a prompt.' },
);
