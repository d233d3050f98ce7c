import type { CheckpointFamily } from './checkpoint-roles.ts';

/**
 * The model families the compilers draw with, one profile each: what the model's authors use (its
 * native pixel budget, steps, cfg, sampler and schedule, what guidance and clip_skip mean, its
 * latent, which adapters fit). A graph's profile is chosen by the checkpoint it loads
 * (`profileOf` in chains/model-profile.ts), never by the path that asked; every compiler that
 * samples reads its sizes and settings from here.
 *
 * A later field (a palette, style alignment) adds a member to ModelProfile and a value per row;
 * nothing else reads the table's shape.
 */

/** The graph a model takes: its loaders, latent, text encoders and the adapters that fit it. */
export type Architecture = 'sd1.5' | 'sdxl' | 'sd3' | 'flux';

export type ProfileId =
  | 'sd1.5'
  | 'sd1.5-inpainting'
  | 'sdxl'
  | 'sdxl-inpainting'
  | 'sdxl-lightning'
  | 'sdxl-turbo'
  | 'sd3'
  | 'sd3.5'
  | 'flux-dev'
  | 'flux-schnell';

/** Pixels per latent block along each side, and the empty latent's smallest side. */
export interface LatentGrid {
  readonly multiple: number;
  readonly min: number;
}

/** SD1.5 and SDXL (EmptyLatentImage): 8 px blocks, at least 16 px. */
export const SD_GRID: LatentGrid = { multiple: 8, min: 16 };
/** SD3 and Flux (EmptySD3LatentImage): their transformers patch 2 x 2 latent blocks, so 16 px. */
export const SD3_GRID: LatentGrid = { multiple: 16, min: 16 };

/** Where a model draws well, in pixels. */
export interface PixelBudget {
  /** The side of the square the model was trained at; its area is the native budget. */
  readonly side: number;
  /** The sampled area's range as fractions of side²: inside it a request is sampled at its own size. */
  readonly minShare: number;
  readonly maxShare: number;
  /** No sampled side beyond this (a longer one repeats subjects), and none below `minSide`. */
  readonly maxSide: number;
  readonly minSide: number;
  /**
   * The largest area a second pass (hires, or a size beyond the range) samples, as a fraction of
   * side²: twice the side, the hires fix's usual reach. A larger answer is scaled up after it.
   */
  readonly secondPassShare: number;
  readonly grid: LatentGrid;
}

/** What a sampler runs with when the request does not say (or says the API's default, on a distilled model). */
export interface SamplerDefaults {
  readonly steps: number;
  readonly cfg: number;
  readonly sampler_name: string;
  readonly scheduler: string;
}

/**
 * A step- or guidance-distilled model: its own steps and cfg replace the API's defaults (which are
 * a base model's: 20 to 30 steps, cfg 7.5), the sigma schedule is its own whatever sampler the
 * request names, and a request past these bounds is refused at submission.
 */
export interface Distillation {
  readonly maxSteps: number;
  readonly maxCfg: number;
}

/**
 * What `guidance_scale` drives: the sampler's classifier-free guidance (`cfg`), Flux Dev's
 * distilled guidance (FluxGuidance, the sampler at cfg 1), or nothing (Flux Schnell: refused
 * unless left at its default).
 */
export type GuidanceKind = 'cfg' | 'flux-guidance' | 'none';

/**
 * Which layer of the text encoder the prompt is read from by default, counted from the end, as
 * `clip_skip` counts: SD1.5 reads the last (1), SDXL the one before it (2); SD3 and Flux encode
 * with T5 too and take no clip_skip (null).
 */
export type ClipLayer = 1 | 2 | null;

export interface ModelProfile {
  readonly id: ProfileId;
  /** How errors and docs name it. */
  readonly name: string;
  readonly architecture: Architecture;
  readonly pixels: PixelBudget;
  readonly sampling: SamplerDefaults;
  readonly distilled?: Distillation;
  readonly guidance: GuidanceKind;
  /** FluxGuidance's value that the API's default guidance stands for (Flux Dev). */
  readonly distilledGuidance?: number;
  readonly clipLayer: ClipLayer;
  /** The latent's channels: 4 for the SD VAEs, 16 for SD3's and Flux's. */
  readonly latentChannels: 4 | 16;
  /** Whether the model reads a negative prompt (Flux samples at cfg 1 and never does). */
  readonly negativePrompt: boolean;
  /** An inpainting checkpoint: its UNet reads the picture and mask beside the latent. */
  readonly inpainting: boolean;
  /** The family whose controlnets, IP-Adapters and LCM LoRA fit it; null: none of this engine's. */
  readonly adapters: 'sd' | 'sdxl' | null;
  /** Where its values come from. */
  readonly source: string;
}

const SD15_PIXELS: PixelBudget = {
  side: 512,
  minShare: 0.5625,
  maxShare: 1.5,
  maxSide: 1024,
  minSide: 64,
  secondPassShare: 4,
  grid: SD_GRID,
};

const SDXL_PIXELS: PixelBudget = {
  side: 1024,
  minShare: 0.5625,
  maxShare: 1.3,
  maxSide: 2048,
  minSide: 128,
  secondPassShare: 4,
  grid: SD_GRID,
};

const SD3_PIXELS: PixelBudget = { ...SDXL_PIXELS, maxShare: 1.5, grid: SD3_GRID };

/** Flux was trained from 0.1 to 2 megapixels at many ratios: it samples most requests as they are. */
const FLUX_PIXELS: PixelBudget = {
  side: 1024,
  minShare: 0.25,
  maxShare: 2.1,
  maxSide: 2048,
  minSide: 128,
  secondPassShare: 4,
  grid: SD3_GRID,
};

const SD = { architecture: 'sd1.5', latentChannels: 4, negativePrompt: true, adapters: 'sd' } as const;
const XL = { architecture: 'sdxl', latentChannels: 4, negativePrompt: true, adapters: 'sdxl' } as const;

export const MODEL_PROFILES: Readonly<Record<ProfileId, ModelProfile>> = {
  'sd1.5': {
    id: 'sd1.5',
    name: 'SD1.5',
    ...SD,
    pixels: SD15_PIXELS,
    sampling: { steps: 20, cfg: 8, sampler_name: 'euler', scheduler: 'normal' },
    guidance: 'cfg',
    clipLayer: 1,
    inpainting: false,
    source: 'ComfyUI_examples upscale_models/esrgan_example.png (v1-5-pruned-emaonly at 512 px)',
  },
  'sd1.5-inpainting': {
    id: 'sd1.5-inpainting',
    name: 'SD1.5 inpainting',
    ...SD,
    pixels: SD15_PIXELS,
    sampling: { steps: 20, cfg: 8, sampler_name: 'uni_pc_bh2', scheduler: 'normal' },
    guidance: 'cfg',
    clipLayer: 1,
    inpainting: true,
    source: 'ComfyUI_examples inpaint/inpain_model_woman.png (512-inpainting-ema)',
  },
  sdxl: {
    id: 'sdxl',
    name: 'SDXL',
    ...XL,
    pixels: SDXL_PIXELS,
    sampling: { steps: 25, cfg: 5, sampler_name: 'euler', scheduler: 'normal' },
    guidance: 'cfg',
    clipLayer: 2,
    inpainting: false,
    source:
      "ComfyUI_examples sdxl/sdxl_simple_example.png (25 steps at 1024 px); Stability's and diffusers' guidance 5",
  },
  'sdxl-inpainting': {
    id: 'sdxl-inpainting',
    name: 'SDXL inpainting',
    ...XL,
    pixels: SDXL_PIXELS,
    sampling: { steps: 20, cfg: 8, sampler_name: 'uni_pc_bh2', scheduler: 'normal' },
    guidance: 'cfg',
    clipLayer: 2,
    inpainting: true,
    source: "diffusers/stable-diffusion-xl-1.0-inpainting-0.1's card (20 steps, guidance 8)",
  },
  'sdxl-lightning': {
    id: 'sdxl-lightning',
    name: 'SDXL-Lightning',
    ...XL,
    pixels: SDXL_PIXELS,
    sampling: { steps: 8, cfg: 1, sampler_name: 'euler', scheduler: 'sgm_uniform' },
    distilled: { maxSteps: 8, maxCfg: 2 },
    guidance: 'cfg',
    clipLayer: 2,
    inpainting: false,
    source: "ByteDance/SDXL-Lightning's card (8-step checkpoint: Euler, sgm_uniform, no guidance)",
  },
  'sdxl-turbo': {
    id: 'sdxl-turbo',
    name: 'SDXL-Turbo',
    ...XL,
    // SDXL-Turbo was distilled at 512 px.
    pixels: { ...SD15_PIXELS, minSide: 128 },
    sampling: { steps: 1, cfg: 1, sampler_name: 'euler_ancestral', scheduler: 'sgm_uniform' },
    distilled: { maxSteps: 4, maxCfg: 2 },
    guidance: 'cfg',
    clipLayer: 2,
    inpainting: false,
    source:
      "ComfyUI_examples sdturbo/sdxlturbo_example.png (1 step, euler_ancestral, cfg 1, 512 px); stabilityai/sdxl-turbo's card (1 to 4 steps)",
  },
  sd3: {
    id: 'sd3',
    name: 'SD3',
    architecture: 'sd3',
    pixels: SD3_PIXELS,
    sampling: { steps: 30, cfg: 5.45, sampler_name: 'euler', scheduler: 'sgm_uniform' },
    guidance: 'cfg',
    clipLayer: null,
    latentChannels: 16,
    negativePrompt: true,
    inpainting: false,
    adapters: null,
    source: 'ComfyUI_examples sd3/sd3_text_encoders_example.png',
  },
  'sd3.5': {
    id: 'sd3.5',
    name: 'SD3.5',
    architecture: 'sd3',
    pixels: SD3_PIXELS,
    sampling: { steps: 20, cfg: 5.45, sampler_name: 'euler', scheduler: 'sgm_uniform' },
    guidance: 'cfg',
    clipLayer: null,
    latentChannels: 16,
    negativePrompt: true,
    inpainting: false,
    adapters: null,
    source: 'ComfyUI_examples sd3/sd3.5_text_encoders_example.png',
  },
  'flux-dev': {
    id: 'flux-dev',
    name: 'Flux Dev',
    architecture: 'flux',
    pixels: FLUX_PIXELS,
    sampling: { steps: 20, cfg: 1, sampler_name: 'euler', scheduler: 'simple' },
    guidance: 'flux-guidance',
    distilledGuidance: 3.5,
    clipLayer: null,
    latentChannels: 16,
    negativePrompt: false,
    inpainting: false,
    adapters: null,
    source: 'ComfyUI_examples flux/flux_dev_example.png (20 steps, FluxGuidance 3.5, ModelSamplingFlux)',
  },
  'flux-schnell': {
    id: 'flux-schnell',
    name: 'Flux Schnell',
    architecture: 'flux',
    pixels: FLUX_PIXELS,
    sampling: { steps: 4, cfg: 1, sampler_name: 'euler', scheduler: 'simple' },
    distilled: { maxSteps: 4, maxCfg: 1 },
    guidance: 'none',
    clipLayer: null,
    latentChannels: 16,
    negativePrompt: false,
    inpainting: false,
    adapters: null,
    source: 'ComfyUI_examples flux/flux_schnell_example.png (4 steps, no guidance)',
  },
};

/** The profile of a family COMFYUI_CHECKPOINTS may declare for an id (`my-xl:sdxl=…`). */
export function profileOfFamily(family: CheckpointFamily): ModelProfile {
  return MODEL_PROFILES[family];
}

/** The inpainting variant of a profile (its inpainting checkpoint), or the profile itself. */
export function inpaintingVariant(profile: ModelProfile): ModelProfile {
  if (profile.inpainting) return profile;
  if (profile.architecture === 'sd1.5') return MODEL_PROFILES['sd1.5-inpainting'];
  if (profile.architecture === 'sdxl') return MODEL_PROFILES['sdxl-inpainting'];
  return profile;
}

/** The native area of a profile, in pixels. */
export function nativeArea(profile: ModelProfile): number {
  return profile.pixels.side * profile.pixels.side;
}

/**
 * The LCM sampling (ComfyUI_examples lcm/lcm_basic_example.png: the LCM LoRA, ModelSamplingDiscrete
 * `lcm`, the lcm sampler on sgm_uniform, 5 steps at cfg 1.8). The LCM-LoRA's card: 4 to 8 steps,
 * guidance 1 to 2.
 */
export const LCM_SAMPLING: SamplerDefaults & Distillation = {
  steps: 5,
  cfg: 1.8,
  sampler_name: 'lcm',
  scheduler: 'sgm_uniform',
  maxSteps: 8,
  maxCfg: 2,
};
