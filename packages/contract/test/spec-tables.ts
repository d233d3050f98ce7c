/**
 * The API reference's tables (numeric bounds, enumerations, defaults, paths) transcribed as data,
 * independently of the schemas: the tests check every schema against these rows, so a bound or
 * default typed wrong in a schema fails a test.
 */
import LISTS from './fixtures/reference-lists.json' with { type: 'json' };

export interface BoundRow {
  field: string;
  gt?: number;
  ge?: number;
  lt?: number;
  le?: number;
  /** The bound is on each item of a list. */
  each?: boolean;
  /** Schemas the row applies to; absent = every request schema that has the field. */
  only?: readonly string[];
  /** Schemas with their own row for this field. */
  except?: readonly string[];
}

const SD15 = [
  'Text2ImagePromptSD',
  'Image2ImagePromptSD',
  'InpaintingPromptSD',
  'ControlnetPromptSD',
  'SDGenPrompt',
];
const SDXL = [
  'Text2ImagePromptSDXL',
  'Image2ImagePromptSDXL',
  'InpaintingPromptSDXL',
  'ControlnetPromptSDXL',
  'SDXLGenPrompt',
];

// "Numeric bounds", row by row.
export const BOUNDS: readonly BoundRow[] = [
  { field: 'samples', gt: 0, le: 4, except: ['SD35Prompt', 'StableCascadePrompt'] },
  { field: 'samples', gt: 0, le: 2, only: ['SD35Prompt', 'StableCascadePrompt'] },
  { field: 'num_inference_steps', gt: 0, lt: 41, except: ['PhotomakerPrompt'] },
  { field: 'num_inference_steps', gt: 0, lt: 20, only: ['PhotomakerPrompt'] },
  { field: 'guidance_scale', gt: 0, le: 20, except: ['SD35Prompt'] },
  { field: 'guidance_scale', ge: 0, le: 20, only: ['SD35Prompt'] },
  { field: 'strength', gt: 0, le: 1 },
  { field: 'clip_skip', gt: 0, le: 12 },
  ...['height', 'width'].flatMap((field) => [
    { field, gt: 0, le: 1536, only: [...SD15, ...SDXL, 'PhotomakerPrompt', 'RelightPrompt'] },
    { field, gt: 0, le: 1440, only: ['StylePrompt'] },
    { field, gt: 0, le: 1024, only: ['InstamodelPrompt'] },
  ]),
  { field: 'lora_weights', gt: -10, le: 10, each: true },
  { field: 'controlnet_weights', ge: 0, le: 2, each: true, only: SD15 },
  { field: 'controlnet_weights', ge: 0, le: 1, each: true, only: SDXL },
  { field: 'starting_control_steps', ge: 0, le: 1, each: true },
  { field: 'ending_control_steps', ge: 0, le: 1, each: true },
  { field: 'ip_adapter_scale', ge: 0, le: 1, each: true },
  // SDGenPrompt's `style` is a preset name (its own row under ENUMS).
  { field: 'style', ge: 0, le: 1, only: [...SD15, ...SDXL], except: ['SDGenPrompt'] },
  { field: 'id_scale', gt: 0, le: 1 },
  { field: 'expansion', gt: 0, le: 256, each: true, only: ['OutpaintingPrompt'] },
  { field: 'overlap', gt: 0, le: 0.05, only: ['OutpaintingPrompt'] },
  { field: 'resolution', gt: 0, le: 1024, only: ['OutpaintingPrompt'] },
  { field: 'start_merge_step', gt: 0, le: 30, only: ['PhotomakerPrompt'] },
  { field: 'scale_factor', gt: 0, le: 4, only: ['SuperresolutionPrompt'] },
  { field: 'tile', ge: 128, le: 256, only: ['SuperresolutionPrompt'] },
  { field: 'max_train_steps', gt: 0, le: 300, only: ['TrainModelPrompt'] },
];

export const PALETTE_MAX = 5;

export interface EnumRow {
  field: string;
  members: readonly string[];
  /** `{hash}` is a member: an uploaded model's hash is accepted too. */
  hash?: boolean;
  each?: boolean;
  only: readonly string[];
}

// "Enumerations" (and the closed lists the reference gives beside its request schemas).
export const ENUMS: readonly EnumRow[] = [
  {
    field: 'scheduler',
    members: LISTS.schedulers,
    only: [...SD15, ...SDXL, 'PhotomakerPrompt'],
  },
  { field: 'revision', members: ['fp16', 'fp32'], only: ['LoadModelPrompt'] },
  { field: 'model_extension', members: ['safetensors', 'ckpt'], only: ['LoadModelPrompt'] },
  { field: 'model_type', members: ['lora', 'checkpoint', 'embedding'], only: ['LoadModelPrompt'] },
  { field: 'base_model', members: ['sd1.5', 'sdxl', 'flux'], only: ['LoadModelPrompt', 'TrainModelPrompt'] },
  { field: 'visibility', members: ['private', 'public'], only: ['LoadModelPrompt', 'TrainModelPrompt'] },
  {
    field: 'model_name',
    members: ['RealESRGAN_x4plus', 'RealESRGAN_x2plus', 'realesr-general-x4v3'],
    hash: true,
    only: ['SuperresolutionPrompt'],
  },
  {
    field: 'ip_adapter',
    members: ['ip-adapter_sd15_light', 'ip-adapter_sd15', 'ip-adapter-plus_sd15'],
    hash: true,
    each: true,
    only: SD15,
  },
  {
    field: 'ip_adapter',
    members: [
      'ip-adapter_sdxl',
      'ip-adapter_sdxl_vit-h',
      'ip-adapter-plus_sdxl_vit-h',
      'ip-adapter-plus-face_sdxl_vit-h',
    ],
    each: true,
    only: SDXL,
  },
  { field: 'controlnets', members: ['openpose', 'canny', 'depth'], each: true, only: [...SD15, ...SDXL] },
  // The presets the Stable Diffusion 1.5 page lists for /generate/v1.
  { field: 'style', members: ['realistic_portrait', 'fantasy_art', 'cartoon_anime'], only: ['SDGenPrompt'] },
  { field: 'operation', members: ['fill', 'replace', 'remove'], only: ['InpaintAnythingPrompt'] },
  { field: 'light', members: ['left', 'right', 'top', 'bottom'], only: ['RelightPrompt'] },
  { field: 'direction', members: ['left', 'right', 'up', 'down'], each: true, only: ['OutpaintingPrompt'] },
  { field: 'type', members: ['deblur', 'variation'], only: ['UpscalerPrompt'] },
];

export const PLANS = LISTS.plans;

export interface DefaultRow {
  field: string;
  value: unknown;
  only: readonly string[];
}

const ALL = '*';
const SIZE_1024 = [...SDXL, 'StylePrompt', 'PhotomakerPrompt', 'RelightPrompt', 'InstamodelPrompt'];

// "API defaults", plus the defaults the reference writes beside a field.
export const DEFAULTS: readonly DefaultRow[] = [
  // "Generate v1" is the body of /generate/v1; the Flux Schnell page gives Generate v3 two samples.
  { field: 'samples', value: 4, only: ['SDGenPrompt'] },
  { field: 'samples', value: 2, only: ['StylePrompt'] },
  {
    field: 'samples',
    value: 1,
    only: [...SD15.filter((s) => s !== 'SDGenPrompt'), ...SDXL, 'InstamodelPrompt'],
  },
  {
    field: 'num_inference_steps',
    value: 20,
    only: ['Text2ImagePromptSD', 'Text2ImagePromptSDXL', 'SDXLGenPrompt'],
  },
  { field: 'num_inference_steps', value: 30, only: ['SDGenPrompt', 'StylePrompt'] },
  { field: 'num_inference_steps', value: 9, only: ['InstamodelPrompt'] },
  { field: 'guidance_scale', value: 7.5, only: [...SD15, ...SDXL, 'StylePrompt'] },
  { field: 'guidance_scale', value: 8, only: ['RelightPrompt'] },
  { field: 'guidance_scale', value: 1, only: ['InstamodelPrompt'] },
  { field: 'strength', value: 0.8, only: [...SD15, ...SDXL] },
  { field: 'strength', value: 1, only: ['OutpaintingPrompt'] },
  ...['height', 'width'].flatMap((field) => [
    { field, value: 512, only: SD15 },
    { field, value: 1024, only: SIZE_1024 },
    { field, value: 768, only: ['FaceLockPrompt'] },
  ]),
  { field: 'seed', value: -1, only: [ALL] },
  { field: 'clip_skip', value: 2, only: ['SDGenPrompt'] },
  { field: 'id_scale', value: 0.8, only: ['FaceLockPrompt'] },
  { field: 'expansion', value: [64], only: ['OutpaintingPrompt'] },
  { field: 'resolution', value: 1024, only: ['OutpaintingPrompt', ...SD15, ...SDXL] },
  { field: 'style', value: 'realistic_portrait', only: ['StylePrompt', 'SDGenPrompt'] },
  { field: 'controlnets', value: ['canny'], only: ['ControlnetPromptSD', 'ControlnetPromptSDXL'] },
  { field: 'type', value: 'deblur', only: ['UpscalerPrompt'] },
  { field: 'operation', value: 'fill', only: ['InpaintAnythingPrompt'] },
  { field: 'light', value: 'left', only: ['RelightPrompt'] },
  { field: 'model_id', value: 'sd1.5', only: SD15 },
  { field: 'model_id', value: 'sdxl', only: SDXL },
  {
    field: 'scheduler',
    value: 'EulerDiscreteScheduler',
    only: ['Text2ImagePromptSD', 'Text2ImagePromptSDXL', 'PhotomakerPrompt'],
  },
  {
    field: 'scheduler',
    value: 'UniPCMultistepScheduler',
    only: ['Image2ImagePromptSD', 'Image2ImagePromptSDXL'],
  },
  { field: 'direct_link', value: false, only: [ALL] },
  { field: 'queued_image_urls', value: false, only: [ALL] },
  { field: 'base64', value: false, only: [ALL] },
  { field: 'safety_checker', value: false, only: [ALL] },
  { field: 'hires', value: false, only: [ALL] },
  { field: 'hidiffusion', value: false, only: [ALL] },
  { field: 'enhance_prompt', value: false, only: [ALL] },
  { field: 'face_enhance', value: false, only: [ALL] },
  { field: 'nsfw', value: false, only: [ALL] },
];

export const EVERY_SCHEMA = ALL;

/** The reference's paths, verbatim. */
export const SPEC_PATHS = LISTS.paths;

/**
 * Every task path whose output is images (the reference's paths plus the designed ones): each
 * accepts `safety_checker` and defaults it to false.
 */
export const IMAGE_PRODUCING_PATHS = LISTS.imageProducingPaths;

/** Task paths whose output is not an image: text, a model, uploaded links. */
export const NON_IMAGE_PATHS = LISTS.nonImagePaths;
