import type { Link, NodeInputs } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { Size } from './image-size.ts';

/**
 * `hires`: the picture sampled at the requested size is enlarged in latent space and sampled again
 * at part strength, which adds detail the first pass could not hold (A1111's "hires fix"). The
 * answer is `HIRES_FIX.scale` times the requested size.
 */
export const HIRES_FIX = { scale: 1.5, denoise: 0.5, upscaleMethod: 'nearest-exact' } as const;

export const HIRES_NODES: readonly NodeClass[] = ['LatentUpscaleBy', 'KSampler'];

/** SD latents hold one value per 8 x 8 pixels. */
const LATENT_PIXELS = 8;

/** Python's round(): halves go to the even neighbour. */
function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const fraction = x - floor;
  if (fraction !== 0.5) return Math.round(x);
  return floor % 2 === 0 ? floor : floor + 1;
}

/**
 * The second pass, with the first pass's sampling settings, at `denoise` (HIRES_FIX's, or less where
 * the picture must not change more); answers the latent and its new size.
 */
export function hiresPass(
  w: Workflow,
  first: Omit<NodeInputs<'KSampler'>, 'latent_image' | 'denoise'>,
  latent: Link<'LATENT'>,
  sampled: Size,
  denoise: number = HIRES_FIX.denoise,
): { latent: Link<'LATENT'>; size: Size } {
  const enlarged = w
    .node('LatentUpscaleBy', {
      samples: latent,
      upscale_method: HIRES_FIX.upscaleMethod,
      scale_by: HIRES_FIX.scale,
    })
    .out(0);
  // LatentUpscaleBy rounds each latent side with Python's round().
  const side = (n: number) => roundHalfEven((n / LATENT_PIXELS) * HIRES_FIX.scale) * LATENT_PIXELS;
  return {
    latent: w.sample({ ...first, latent_image: enlarged, denoise }),
    size: { width: side(sampled.width), height: side(sampled.height) },
  };
}
