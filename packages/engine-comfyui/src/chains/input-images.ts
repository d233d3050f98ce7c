import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { Size } from './image-size.ts';

/** Request images on the graph: loaded by their uploaded name, sized for sampling, encoded. */

/** The node classes of each function below. */
export const IMAGE_NODES = {
  load: ['LoadImage'],
  sized: ['LoadImage', 'ImageScale'],
  mask: ['LoadImage', 'ImageScale', 'ImageToMask'],
  encode: ['VAEEncode', 'RepeatLatentBatch'],
  batch: ['LoadImage', 'ImageBatch'],
  sizedBatch: ['LoadImage', 'ImageScale', 'ImageBatch'],
} as const satisfies Record<string, readonly NodeClass[]>;

export function loadImage(w: Workflow, uploaded: string): Link<'IMAGE'> {
  return w.node('LoadImage', { image: uploaded }).out(0);
}

/** Several uploaded pictures as one batch, in order (ImageBatch scales each to the first one's size). */
export function loadImageBatch(w: Workflow, uploaded: readonly string[]): Link<'IMAGE'> {
  return batchOf(
    w,
    uploaded.map((name) => loadImage(w, name)),
  );
}

/** Several uploaded pictures, each at `size` (centre crop), as one batch in order. */
export function loadImageBatchAt(w: Workflow, uploaded: readonly string[], size: Size): Link<'IMAGE'> {
  return batchOf(
    w,
    uploaded.map((name) => loadImageAt(w, name, size)),
  );
}

function batchOf(w: Workflow, images: readonly Link<'IMAGE'>[]): Link<'IMAGE'> {
  const [first, ...rest] = images;
  if (!first) throw new Error('an image batch needs at least one picture');
  return rest.reduce((batch, next) => w.node('ImageBatch', { image1: batch, image2: next }).out(0), first);
}

/**
 * An input picture at the sampling size (centre crop, so its proportions survive; image to image
 * asks for a size of the picture's own proportions, so nothing is cut there).
 */
export function loadImageAt(w: Workflow, uploaded: string, size: Size): Link<'IMAGE'> {
  const image = loadImage(w, uploaded);
  return w.node('ImageScale', { image, upscale_method: 'lanczos', ...size, crop: 'center' }).out(0);
}

/**
 * A black-and-white mask picture (white: repaint) as a MASK at the sampling size, cropped as its
 * image is. Its red channel is read: a mask picture is grey, and LoadImage's own MASK output is the
 * alpha channel, which mask pictures seldom carry.
 */
export function loadMaskAt(w: Workflow, uploaded: string, size: Size): Link<'MASK'> {
  const image = loadImageAt(w, uploaded, size);
  return w.node('ImageToMask', { image, channel: 'red' }).out(0);
}

/** `samples` copies of one latent (an encoded picture is a batch of one). */
export function repeatLatent(w: Workflow, latent: Link<'LATENT'>, samples: number): Link<'LATENT'> {
  return samples > 1 ? w.node('RepeatLatentBatch', { samples: latent, amount: samples }).out(0) : latent;
}

/** A picture to start sampling from (image2image): encoded, repeated for the batch. */
export function encodeImage(
  w: Workflow,
  pixels: Link<'IMAGE'>,
  vae: Link<'VAE'>,
  samples: number,
): Link<'LATENT'> {
  return repeatLatent(w, w.node('VAEEncode', { pixels, vae }).out(0), samples);
}
