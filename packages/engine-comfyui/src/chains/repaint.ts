import type { CompileContext } from '../contracts.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, type Workflow } from '../workflow/workflow.ts';
import { COMPOSITE_NODES, compositeOver, SOFT_MASK_NODES, softenMask } from './composite.ts';
import { budgetSize, type Size } from './image-size.ts';
import { inpaint } from './inpainting.ts';
import { scaleImage } from './input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  loadCheckpoint,
  profileOf,
  roleNeed,
} from './model-files.ts';
import { encodePrompts } from './prompt-encoding.ts';

/**
 * Repainting one part of a picture from a prompt while the rest stays as it was, pixel for pixel:
 * the picture is sampled near SDXL's megapixel in its own proportions, the part (white in the
 * mask) repainted through InpaintModelConditioning, and the result laid over the original
 * picture, at its own size, through the same mask. The pipelines that use it (background change,
 * model switch, inpaint anything) take no steps or guidance: the loaded model's own (its profile:
 * SDXL inpainting's 20 steps where `sdxl:inpainting` is mapped, else SDXL's 25) stand for them.
 */

// One repaint per picture: the original is never repeated for a batch.
export const REPAINT_NODES: readonly NodeClass[] = nodeClasses(CHECKPOINT_DIFFUSION_NODES, [
  'ImageScale',
  'ImageScaleToTotalPixels',
  'InpaintModelConditioning',
  ...COMPOSITE_NODES.filter((node) => node !== 'RepeatImageBatch'),
]);

/** The nodes of a repaint whose mask is softened (a hard-edged mask). */
export const SOFT_REPAINT_NODES: readonly NodeClass[] = nodeClasses(REPAINT_NODES, SOFT_MASK_NODES);

/** The SDXL checkpoint the repainting pipelines sample with: SDXL's inpainting one where it is mapped. */
export const REPAINT_MODEL_NEED = roleNeed('sdxl', 'inpainting');

/** The repaint's model id: SDXL (mappable as `sdxl`). */
const MODEL_ID = 'sdxl';

/** ImageScaleToTotalPixels counts a megapixel as 1024 x 1024. */
const MEGAPIXEL = 1024 * 1024;

export interface Repaint {
  /** The original picture. */
  readonly picture: Link<'IMAGE'>;
  /** Its size where the engine knows it (it always does when a task runs). */
  readonly pictureSize: Size | undefined;
  /** White: repaint; at the picture's size (or any: it is scaled where it is used). */
  readonly mask: Link<'MASK'>;
  /**
   * Grow and feather the mask before it is used (a hard-edged mask, whose edge would show as a
   * seam); a soft matte (RMBG's) is used as it is, so what it keeps stays pixel for pixel.
   */
  readonly soften?: boolean;
  readonly prompt: string;
  readonly negativePrompt: string;
  /** Patches the model before sampling (an IP-Adapter style), where a request asks for it. */
  readonly adapt?: (model: Link<'MODEL'>) => Link<'MODEL'>;
}

/** The picture with the masked part repainted, at the picture's own size. */
export function repaint(w: Workflow, ctx: CompileContext, r: Repaint): Link<'IMAGE'> {
  // The SDXL inpainting checkpoint where COMFYUI_CHECKPOINTS maps `sdxl:inpainting`, else the base.
  const profile = profileOf(ctx, MODEL_ID, MODEL_ID, 'inpainting');
  const checkpoint = loadCheckpoint(w, checkpointFile(ctx, MODEL_ID, undefined, 'inpainting'));
  const model = r.adapt ? r.adapt(checkpoint.model) : checkpoint.model;
  const working = r.pictureSize ? budgetSize(profile, r.pictureSize) : undefined;
  const pixels = working
    ? scaleImage(w, r.picture, working)
    : w
        .node('ImageScaleToTotalPixels', {
          image: r.picture,
          upscale_method: 'lanczos',
          megapixels: (profile.pixels.side * profile.pixels.side) / MEGAPIXEL,
        })
        .out(0);
  const mask = r.soften ? softenMask(w, r.mask, r.pictureSize) : r.mask;
  const conditioning = encodePrompts(w, checkpoint.clip, r.prompt, r.negativePrompt);
  const { latent, ...painted } = inpaint(w, conditioning, checkpoint.vae, pixels, mask, 1);
  const sampled = w.sample({
    model,
    seed: ctx.seed,
    ...profile.sampling,
    ...painted,
    latent_image: latent,
    denoise: 1,
  });
  const decoded = w.node('VAEDecode', { samples: sampled, vae: checkpoint.vae }).out(0);
  return compositeOver(w, {
    original: r.picture,
    originalSize: r.pictureSize,
    painted: decoded,
    // Without the picture's size ImageScaleToTotalPixels decides it, and the composite scales.
    paintedSize: working ?? { width: 0, height: 0 },
    mask,
    samples: 1,
  });
}
