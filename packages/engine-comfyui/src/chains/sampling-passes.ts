import type { Link, NodeInputs } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { Size, SizePlan } from './image-size.ts';
import { GENERAL_UPSCALER } from './upscaling.ts';

/**
 * Sampling in one or two passes, as the 2-pass references do: the first pass near the model's
 * budget, then, where the plan has one, the picture enlarged and sampled again at part strength,
 * which draws the detail the larger size can hold (A1111's hires fix). At the usual 0.5 the
 * enlargement is a latent upscale (2_pass_txt2img/hiresfix_latent_workflow.png); below it a
 * latent upscale's blocks would survive the pass (a picture that may change little comes out
 * blocky and soft), so the picture is enlarged in pixel space by ESRGAN and encoded again
 * (hiresfix_esrgan_workflow.png).
 */

/** The second pass's strength: the references' 0.5, or less where a picture must not change more. */
export const HIRES_DENOISE = 0.5;

/** The least denoise that cleans a nearest-exact latent upscale's blocks. */
export const LATENT_UPSCALE_DENOISE = 0.5;

export const PASS_NODES: readonly NodeClass[] = ['KSampler', 'VAEDecode'];
export const SECOND_PASS_NODES: readonly NodeClass[] = [
  'LatentUpscale',
  'UpscaleModelLoader',
  'ImageUpscaleWithModel',
  'ImageScale',
  'VAEEncode',
];
/** The pixel-space second pass of an inpainting sets its noise mask again on the encoded picture. */
export const MASKED_SECOND_PASS_NODES: readonly NodeClass[] = [...SECOND_PASS_NODES, 'SetLatentNoiseMask'];

/** What the ESRGAN of a pixel-space second pass needs on the servers. */
export const SECOND_PASS_UPSCALER_NEED = {
  folder: 'upscale_models',
  what: `\`${GENERAL_UPSCALER.file}\` where a second pass runs below ${LATENT_UPSCALE_DENOISE} (hires or a large size, on a picture at a low strength)`,
} as const;

export type SamplerInputs = Omit<NodeInputs<'KSampler'>, 'latent_image' | 'denoise'>;

export interface Passes {
  readonly sampler: SamplerInputs;
  readonly vae: Link<'VAE'>;
  /** What the first pass starts from: an empty latent, an encoded picture, an inpainting latent. */
  readonly latent: Link<'LATENT'>;
  readonly denoise: number;
  readonly plan: SizePlan;
  /** The second pass's strength (HIRES_DENOISE, or less). */
  readonly secondDenoise: number;
  /** An inpainting's mask: the pixel-space second pass keeps repainting only there. */
  readonly mask?: Link<'MASK'>;
  /** The first pass where it is not one KSampler (PhotoMaker's two steps of one schedule). */
  readonly first?: (latent: Link<'LATENT'>) => Link<'LATENT'>;
  /** The second pass's sampler where it is not the first's (PhotoMaker's merged prompt). */
  readonly secondSampler?: SamplerInputs;
}

/** The passes run; answers the decoded pictures and their size (the last pass's). */
export function samplePasses(w: Workflow, p: Passes): { image: Link<'IMAGE'>; size: Size } {
  const first = p.first
    ? p.first(p.latent)
    : w.sample({ ...p.sampler, latent_image: p.latent, denoise: p.denoise });
  const decode = (samples: Link<'LATENT'>) => w.node('VAEDecode', { samples, vae: p.vae }).out(0);
  const second = p.plan.second;
  if (!second) return { image: decode(first), size: p.plan.first };
  let enlarged: Link<'LATENT'>;
  if (p.secondDenoise >= LATENT_UPSCALE_DENOISE) {
    enlarged = w
      .node('LatentUpscale', {
        samples: first,
        upscale_method: 'nearest-exact',
        ...second,
        crop: 'disabled',
      })
      .out(0);
  } else {
    const upscale_model = w.node('UpscaleModelLoader', { model_name: GENERAL_UPSCALER.file }).out(0);
    const upscaled = w.node('ImageUpscaleWithModel', { upscale_model, image: decode(first) }).out(0);
    const pixels = w
      .node('ImageScale', { image: upscaled, upscale_method: 'lanczos', ...second, crop: 'disabled' })
      .out(0);
    enlarged = w.node('VAEEncode', { pixels, vae: p.vae }).out(0);
    if (p.mask) enlarged = w.node('SetLatentNoiseMask', { samples: enlarged, mask: p.mask }).out(0);
  }
  const sampled = w.sample({
    ...(p.secondSampler ?? p.sampler),
    latent_image: enlarged,
    denoise: p.secondDenoise,
  });
  return { image: decode(sampled), size: second };
}
