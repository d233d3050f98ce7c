import type { CompileContext } from '../contracts.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, type Workflow } from '../workflow/workflow.ts';
import { inpaint } from './inpainting.ts';
import { CHECKPOINT_DIFFUSION_NODES, checkpointFile, loadCheckpoint, roleNeed } from './model-files.ts';
import { encodePrompts } from './prompt-encoding.ts';
import { samplingFor } from './schedulers.ts';

/**
 * Repainting one part of a picture from a prompt while the rest stays as it was, pixel for pixel:
 * the picture is sampled at SDXL's one megapixel, the part (white in the mask) repainted through
 * InpaintModelConditioning, and the result laid over the original picture, at its own size, through
 * the same mask. The pipelines that use it (background change, model switch, inpaint anything)
 * take no steps or guidance: diffusers' SDXL inpainting defaults stand for them.
 */

export const REPAINT_NODES: readonly NodeClass[] = nodeClasses(CHECKPOINT_DIFFUSION_NODES, [
  'ImageScaleToTotalPixels',
  'InpaintModelConditioning',
  'ImageCompositeMasked',
]);

/** The SDXL checkpoint the repainting pipelines sample with: SDXL's inpainting one where it is mapped. */
export const REPAINT_MODEL_NEED = roleNeed('sdxl', 'inpainting');

/** StableDiffusionXLInpaintPipeline's defaults: 50 steps, guidance 7.5, its Euler scheduler. */
const DIFFUSERS_INPAINT = { steps: 50, cfg: 7.5, ...samplingFor('EulerDiscreteScheduler') } as const;

/** SDXL's native area, in megapixels. */
const SDXL_MEGAPIXELS = 1;

export interface Repaint {
  /** The original picture. */
  readonly picture: Link<'IMAGE'>;
  /** White: repaint; at the picture's size (or any: it is scaled where it is used). */
  readonly mask: Link<'MASK'>;
  readonly prompt: string;
  readonly negativePrompt: string;
  /** Patches the model before sampling (an IP-Adapter style), where a request asks for it. */
  readonly adapt?: (model: Link<'MODEL'>) => Link<'MODEL'>;
}

/** The picture with the masked part repainted, at the picture's own size. */
export function repaint(w: Workflow, ctx: CompileContext, r: Repaint): Link<'IMAGE'> {
  // The SDXL inpainting checkpoint where COMFYUI_CHECKPOINTS maps `sdxl:inpainting`, else the base.
  const checkpoint = loadCheckpoint(w, checkpointFile(ctx, 'sdxl', undefined, 'inpainting'));
  const model = r.adapt ? r.adapt(checkpoint.model) : checkpoint.model;
  const pixels = w
    .node('ImageScaleToTotalPixels', {
      image: r.picture,
      upscale_method: 'lanczos',
      megapixels: SDXL_MEGAPIXELS,
    })
    .out(0);
  const conditioning = encodePrompts(w, checkpoint.clip, r.prompt, r.negativePrompt);
  const { latent, ...painted } = inpaint(w, conditioning, checkpoint.vae, pixels, r.mask, 1);
  const sampled = w.sample({
    model,
    seed: ctx.seed,
    ...DIFFUSERS_INPAINT,
    ...painted,
    latent_image: latent,
    denoise: 1,
  });
  const decoded = w.node('VAEDecode', { samples: sampled, vae: checkpoint.vae }).out(0);
  return w
    .node('ImageCompositeMasked', {
      destination: r.picture,
      source: decoded,
      x: 0,
      y: 0,
      resize_source: true,
      mask: r.mask,
    })
    .out(0);
}
