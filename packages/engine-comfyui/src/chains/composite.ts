import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import { type Size, scaleTo } from './image-size.ts';

/**
 * A repainted picture put back: the sampled picture laid over the original, at the original's own
 * size, through the repaint mask, so what the mask leaves out stays pixel for pixel and the answer
 * is the picture that was sent (A1111's inpainting pastes back the same way). A hard mask's edge
 * would show as a seam: it is grown past the edge and feathered first, as A1111's mask blur, and
 * the same soft mask tells the sampler where to repaint, so the blend band is repainted too.
 */

export const SOFT_MASK_NODES: readonly NodeClass[] = ['GrowMask', 'MaskToImage', 'ImageBlur', 'ImageToMask'];
export const COMPOSITE_NODES: readonly NodeClass[] = [
  'ImageScale',
  'RepeatImageBatch',
  'ImageCompositeMasked',
];

/** ImageBlur's largest radius. */
const MOST_BLUR = 31;

/** How far a mask is grown and feathered for a picture of `size`: 8 px each at 1024 px, in proportion. */
export function maskSoftening(size: Size | undefined): { grow: number; blur: number } {
  const side = size ? Math.max(size.width, size.height) : 1024;
  const px = Math.max(2, Math.round(side / 128));
  return { grow: px, blur: Math.min(MOST_BLUR, px) };
}

/** `mask` (white: repaint) grown and feathered for a picture of `size`. */
export function softenMask(w: Workflow, mask: Link<'MASK'>, size: Size | undefined): Link<'MASK'> {
  const { grow, blur } = maskSoftening(size);
  const grown = w.node('GrowMask', { mask, expand: grow, tapered_corners: true }).out(0);
  const image = w.node('MaskToImage', { mask: grown }).out(0);
  const blurred = w.node('ImageBlur', { image, blur_radius: blur, sigma: Math.min(10, blur / 2) }).out(0);
  return w.node('ImageToMask', { image: blurred, channel: 'red' }).out(0);
}

export interface Composite {
  readonly original: Link<'IMAGE'>;
  /** The original's size where the engine knows it (it always does when a task runs). */
  readonly originalSize: Size | undefined;
  readonly painted: Link<'IMAGE'>;
  readonly paintedSize: Size;
  /** White: take the painted picture; any size (it is scaled to the picture's). */
  readonly mask: Link<'MASK'>;
  /** Pictures in the painted batch: the original is repeated to as many. */
  readonly samples: number;
}

/** The painted pictures laid over the original at its own size through the mask, one per sample. */
export function compositeOver(w: Workflow, c: Composite): Link<'IMAGE'> {
  const destination =
    c.samples > 1 ? w.node('RepeatImageBatch', { image: c.original, amount: c.samples }).out(0) : c.original;
  // With the size known, the painted picture is scaled with lanczos; else the node scales it (bilinear).
  const source = c.originalSize ? scaleTo(w, c.painted, c.paintedSize, c.originalSize) : c.painted;
  return w
    .node('ImageCompositeMasked', {
      destination,
      source,
      x: 0,
      y: 0,
      resize_source: c.originalSize === undefined,
      mask: c.mask,
    })
    .out(0);
}
