import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, SAMPLE_NODES, SAVE_NODES, type Workflow } from '../workflow/workflow.ts';
import { EXACT_SIZE_NODES, SD_GRID, type Size, samplingSize, scaleTo } from './image-size.ts';
import type { Conditioning } from './prompt-encoding.ts';
import type { RequestFields } from './request-fields.ts';
import { type Sampling, samplingFor } from './schedulers.ts';

/**
 * The end of every SD1.5 / SDXL text-to-image graph: an empty latent of the request's size (on the
 * latent grid), sampled, decoded and saved at exactly the size asked for.
 */

export const TEXT_TO_IMAGE_NODES: readonly NodeClass[] = nodeClasses(
  ['EmptyLatentImage'],
  SAMPLE_NODES,
  SAVE_NODES,
  EXACT_SIZE_NODES,
);

/** `samples` empty latents at the grid size nearest `target`. */
export function emptyLatent(
  w: Workflow,
  target: Size,
  samples: number,
): { latent: Link<'LATENT'>; size: Size } {
  const size = samplingSize(target, SD_GRID);
  return { latent: w.node('EmptyLatentImage', { ...size, batch_size: samples }).out(0), size };
}

/** Decodes sampled latents of `size` and saves them at `target`. */
export function decodeAndSave(
  w: Workflow,
  latent: Link<'LATENT'>,
  vae: Link<'VAE'>,
  size: Size,
  target: Size,
): void {
  const decoded = w.node('VAEDecode', { samples: latent, vae }).out(0);
  w.save(scaleTo(w, decoded, size, target));
}

export interface Drawing extends Conditioning {
  readonly model: Link<'MODEL'>;
  readonly vae: Link<'VAE'>;
  readonly sampling: Sampling;
  readonly seed: number;
  readonly steps: number;
  readonly cfg: number;
  readonly target: Size;
  readonly samples: number;
}

/** Text to image: `samples` pictures of `target`, sampled from noise with the given conditioning. */
export function drawAtSize(w: Workflow, d: Drawing): void {
  const { latent, size } = emptyLatent(w, d.target, d.samples);
  const sampled = w.sample({
    model: d.model,
    seed: d.seed,
    steps: d.steps,
    cfg: d.cfg,
    ...d.sampling,
    positive: d.positive,
    negative: d.negative,
    latent_image: latent,
    denoise: 1,
  });
  decodeAndSave(w, sampled, d.vae, size, d.target);
}

/** The fields drawRequested reads. */
export interface SizedDrawingFields {
  readonly num_inference_steps: number | undefined;
  readonly guidance_scale: number | undefined;
  readonly width: number | undefined;
  readonly height: number | undefined;
  readonly samples: number | undefined;
}

/**
 * drawAtSize with the request's own `num_inference_steps`, `guidance_scale`, `width`, `height` and
 * `samples`, sampled with Euler unless the model wants another sampling (the face pipelines'
 * requests name no scheduler).
 */
export function drawRequested(
  w: Workflow,
  fields: RequestFields<SizedDrawingFields>,
  seed: number,
  base: Conditioning & { readonly model: Link<'MODEL'>; readonly vae: Link<'VAE'> },
  sampling: Sampling = samplingFor('EulerDiscreteScheduler'),
): void {
  drawAtSize(w, {
    ...base,
    sampling,
    seed,
    steps: fields.number('num_inference_steps'),
    cfg: fields.number('guidance_scale'),
    target: { width: fields.number('width'), height: fields.number('height') },
    samples: fields.number('samples'),
  });
}
