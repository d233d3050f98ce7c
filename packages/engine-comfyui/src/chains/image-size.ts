import type { CompileContext } from '../contracts.ts';
import { type LatentGrid, type ModelProfile, nativeArea, SD_GRID, SD3_GRID } from '../model-profiles.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';

export { type LatentGrid, SD_GRID, SD3_GRID };

/**
 * Sizes: what a model samples and what the request gets. A model draws well only near its own
 * pixel budget (its profile's), and latents come in whole blocks of pixels; a request may ask for
 * any size from 1 px. So a graph samples near the model's budget at the requested proportions,
 * reaches a larger answer with a second pass, and scales the decoded pictures to exactly the
 * size asked for.
 */
export interface Size {
  readonly width: number;
  readonly height: number;
}

/** `target` on the grid: each side the nearest whole number of blocks, at least the grid's smallest. */
export function samplingSize(target: Size, grid: LatentGrid): Size {
  const side = (n: number) => Math.max(grid.min, Math.round(n / grid.multiple) * grid.multiple);
  return { width: side(target.width), height: side(target.height) };
}

/** `size` scaled by `factor` on both sides. */
function scaled(size: Size, factor: number): Size {
  return { width: size.width * factor, height: size.height * factor };
}

/**
 * The size a model samples `target` at: `target` itself where its area is inside the profile's
 * range, else the model's native area, at target's proportions; no side past the profile's
 * longest or below its shortest (a proportion beyond both is sampled at the most extreme one
 * they allow); on the profile's grid. `reach` (a share of the native area) samples up to that
 * instead, its sides up to twice the longest: a second pass's, or HiDiffusion's, which draws
 * large sizes in one pass.
 */
export function budgetSize(profile: ModelProfile, target: Size, reach?: number): Size {
  const { minShare, maxShare, maxSide, minSide, grid } = profile.pixels;
  const native = nativeArea(profile);
  const asked = target.width * target.height;
  const top = native * (reach ?? maxShare);
  const area =
    reach !== undefined
      ? Math.min(top, Math.max(native, asked))
      : asked >= native * minShare && asked <= top
        ? asked
        : native;
  // A pass past the one-pass range (its area up to 4 times the native) may reach twice the side.
  const longestSide = reach === undefined ? maxSide : maxSide * 2;
  let size = scaled(target, Math.sqrt(area / (target.width * target.height)));
  const longest = Math.max(size.width, size.height);
  if (longest > longestSide) size = scaled(size, longestSide / longest);
  const shortest = Math.min(size.width, size.height);
  if (shortest < minSide) size = scaled(size, minSide / shortest);
  const fit = (n: number) =>
    Math.min(Math.floor(longestSide / grid.multiple) * grid.multiple, Math.max(grid.min, n));
  const snapped = samplingSize(size, grid);
  return { width: fit(snapped.width), height: fit(snapped.height) };
}

/** A graph's sizes: the first pass's, the second pass's where one runs, and the answer's. */
export interface SizePlan {
  readonly first: Size;
  readonly second?: Size;
  readonly answer: Size;
}

/** `hires` answers 1.5 times the size (the 2-pass example goes 768 to 1152). */
export const HIRES_SCALE = 1.5;

/**
 * The passes that make `answer` from a request of `target`: the first samples near the model's
 * budget at target's proportions; a second one, up to the profile's second-pass reach, runs where
 * the answer is beyond what one pass draws well (or `hires` asks for it) and larger than the first;
 * the decoded picture is then scaled to exactly `answer`. `direct` (HiDiffusion) samples the answer
 * in one pass, up to that reach.
 */
export function planSizes(
  profile: ModelProfile,
  target: Size,
  answer: Size,
  options: { readonly hires?: boolean; readonly direct?: boolean } = {},
): SizePlan {
  const { maxShare, secondPassShare } = profile.pixels;
  if (options.direct) return { first: budgetSize(profile, answer, secondPassShare), answer };
  const first = budgetSize(profile, target);
  const area = (size: Size) => size.width * size.height;
  const beyond = area(answer) > nativeArea(profile) * maxShare;
  if (!(options.hires || beyond) || area(answer) <= area(first) * 1.05) return { first, answer };
  return { first, second: budgetSize(profile, answer, secondPassShare), answer };
}

/**
 * A picture's framing over a requested size: its own proportions over the area of `target` (the
 * request's width x height), rounded to whole pixels. A graph that starts from a picture answers
 * this, so the picture is never cropped or stretched to the requested shape. An unknown picture
 * size keeps `target`.
 */
export function framedSize(picture: Size | undefined, target: Size): Size {
  if (!picture) return target;
  const factor = Math.sqrt((target.width * target.height) / (picture.width * picture.height));
  return {
    width: Math.max(1, Math.round(picture.width * factor)),
    height: Math.max(1, Math.round(picture.height * factor)),
  };
}

/** `size` times `factor`, rounded as ComfyUI rounds a scaled side. */
export function timesSize(size: Size, factor: number): Size {
  return { width: Math.round(size.width * factor), height: Math.round(size.height * factor) };
}

/** The fetched size of the one picture of a request field, when the engine knows it. */
export function inputSize(ctx: Pick<CompileContext, 'imageSizes'>, field: string): Size | undefined {
  const size = ctx.imageSizes?.[field];
  return size !== undefined && 'width' in size ? (size as Size) : undefined;
}

/** The size of a list field's first picture (or of a single picture's field), where it is known. */
export function firstInputSize(ctx: Pick<CompileContext, 'imageSizes'>, field: string): Size | undefined {
  const sizes = ctx.imageSizes?.[field];
  const first = Array.isArray(sizes) ? sizes[0] : sizes;
  return first && 'width' in first ? (first as Size) : undefined;
}

export const EXACT_SIZE_NODES: readonly NodeClass[] = ['ImageScale'];

/** Scales the images to `target` when they come out another size (never cropped). */
export function scaleTo(w: Workflow, image: Link<'IMAGE'>, current: Size, target: Size): Link<'IMAGE'> {
  if (current.width === target.width && current.height === target.height) return image;
  return w.node('ImageScale', { image, upscale_method: 'lanczos', ...target, crop: 'disabled' }).out(0);
}
