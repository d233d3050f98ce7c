import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { Size } from './image-size.ts';

/** Request images on the graph: loaded by their uploaded name, sized for sampling, encoded. */

/** The node classes of each function below. */
export const IMAGE_NODES = {
  load: ['LoadImage'],
  sized: ['LoadImage', 'ImageScale'],
  mask: ['LoadImage', 'ImageToMask'],
  sizedMask: ['LoadImage', 'ImageScale', 'ImageToMask'],
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

/**
 * Several uploaded pictures as one batch of `size` squares (centre crop): the training batch, whose
 * pictures must share one size; no generation path crops a picture.
 */
export function loadSquareBatch(w: Workflow, uploaded: readonly string[], size: Size): Link<'IMAGE'> {
  return batchOf(
    w,
    uploaded.map((name) =>
      w
        .node('ImageScale', { image: loadImage(w, name), upscale_method: 'lanczos', ...size, crop: 'center' })
        .out(0),
    ),
  );
}

function batchOf(w: Workflow, images: readonly Link<'IMAGE'>[]): Link<'IMAGE'> {
  const [first, ...rest] = images;
  if (!first) throw new Error('an image batch needs at least one picture');
  return rest.reduce((batch, next) => w.node('ImageBatch', { image1: batch, image2: next }).out(0), first);
}

/** A picture scaled to `size`, never cropped: callers ask for a size of its own proportions. */
export function scaleImage(w: Workflow, image: Link<'IMAGE'>, size: Size): Link<'IMAGE'> {
  return w.node('ImageScale', { image, upscale_method: 'lanczos', ...size, crop: 'disabled' }).out(0);
}

/** An uploaded picture at `size` (of its own proportions, or a mask's frame: never cropped). */
export function loadImageAt(w: Workflow, uploaded: string, size: Size): Link<'IMAGE'> {
  return scaleImage(w, loadImage(w, uploaded), size);
}

/**
 * A black-and-white mask picture (white: repaint) as a MASK, at its own size. Its red channel is
 * read: a mask picture is grey, and LoadImage's own MASK output is the alpha channel, which mask
 * pictures seldom carry.
 */
export function loadMask(w: Workflow, uploaded: string): Link<'MASK'> {
  return w.node('ImageToMask', { image: loadImage(w, uploaded), channel: 'red' }).out(0);
}

/** A mask picture as a MASK over a frame of `size` (IP-Adapter's region of the sampled picture). */
export function loadMaskAt(w: Workflow, uploaded: string, size: Size): Link<'MASK'> {
  return w.node('ImageToMask', { image: loadImageAt(w, uploaded, size), channel: 'red' }).out(0);
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
