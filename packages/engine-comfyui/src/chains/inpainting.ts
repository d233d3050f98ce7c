import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import { repeatLatent } from './input-images.ts';
import type { Conditioning } from './prompt-encoding.ts';

export const INPAINT_NODES: readonly NodeClass[] = ['InpaintModelConditioning', 'RepeatLatentBatch'];

/**
 * Inpainting conditioning: the picture and its mask go into the conditioning (inpainting models
 * read them there) and into the latent as a noise mask, so any model repaints only the white part
 * and leaves the rest as it was.
 */
export function inpaint(
  w: Workflow,
  conditioning: Conditioning,
  vae: Link<'VAE'>,
  pixels: Link<'IMAGE'>,
  mask: Link<'MASK'>,
  samples: number,
): Conditioning & { latent: Link<'LATENT'> } {
  const [positive, negative, latent] = w.node('InpaintModelConditioning', {
    ...conditioning,
    vae,
    pixels,
    mask,
    noise_mask: true,
  }).outputs;
  return { positive, negative, latent: repeatLatent(w, latent, samples) };
}
