import type { CompileContext } from '../contracts.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';

/**
 * Latents come in whole blocks of pixels and have a smallest size; requests may ask for any size
 * from 1 px. A graph samples at the nearest size its latent allows and scales the decoded images
 * to exactly the size asked for.
 */
export interface Size {
  readonly width: number;
  readonly height: number;
}

export interface LatentGrid {
  /** Pixels per latent block along each side. */
  readonly multiple: number;
  /** The empty-latent node's smallest side, in pixels. */
  readonly min: number;
}

/** SD1.5 and SDXL (EmptyLatentImage): 8 px blocks, at least 16 px. */
export const SD_GRID: LatentGrid = { multiple: 8, min: 16 };
/** SD3 and Flux (EmptySD3LatentImage): their transformers patch 2 x 2 latent blocks, so 16 px. */
export const SD3_GRID: LatentGrid = { multiple: 16, min: 16 };

export function samplingSize(target: Size, grid: LatentGrid): Size {
  const side = (n: number) => Math.max(grid.min, Math.round(n / grid.multiple) * grid.multiple);
  return { width: side(target.width), height: side(target.height) };
}

/**
 * The size a picture is worked on at: its own proportions over the area of `target` (the
 * request's width x height), on the latent grid, so image-to-image keeps the whole picture instead
 * of cropping it to the requested shape. An unknown picture size keeps `target`.
 */
export function framedSize(picture: Size | undefined, target: Size, grid: LatentGrid): Size {
  if (!picture) return target;
  const scale = Math.sqrt((target.width * target.height) / (picture.width * picture.height));
  return samplingSize({ width: picture.width * scale, height: picture.height * scale }, grid);
}

/** The fetched size of the one picture of a request field, when the engine knows it. */
export function inputSize(ctx: Pick<CompileContext, 'imageSizes'>, field: string): Size | undefined {
  const size = ctx.imageSizes?.[field];
  return size !== undefined && 'width' in size ? (size as Size) : undefined;
}

export const EXACT_SIZE_NODES: readonly NodeClass[] = ['ImageScale'];

/** Scales the images to `target` when they come out another size. */
export function scaleTo(w: Workflow, image: Link<'IMAGE'>, current: Size, target: Size): Link<'IMAGE'> {
  if (current.width === target.width && current.height === target.height) return image;
  return w.node('ImageScale', { image, upscale_method: 'lanczos', ...target, crop: 'disabled' }).out(0);
}
