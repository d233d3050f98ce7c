import sharp from 'sharp';
import { EngineInputError } from '../engine.ts';

export type OutpaintDirection = 'left' | 'right' | 'up' | 'down';

export interface OutpaintOptions {
  /** Sides to extend, in request order. */
  readonly direction: readonly OutpaintDirection[];
  /** Pixels added per direction, in the order of `direction`; one value applies to all. Default 64. */
  readonly expansion?: readonly number[];
  /** Fraction (at most 0.05) of the original's width or height the mask reaches back into it, so seams blend. */
  readonly overlap?: number;
  /** Tiles across and down for a canvas larger than `resolution`; computed when absent. */
  readonly horizontal_tile?: number;
  readonly vertical_tile?: number;
  /** The largest tile side the diffusion model works at (default 1024). */
  readonly resolution?: number;
}

export interface Rect {
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
}

export interface OutpaintCanvas {
  /** The enlarged image (PNG): the original, with its edge pixels stretched into the new area. */
  readonly canvas: Buffer;
  /** White where the model must paint (the new area plus the overlap band), black elsewhere (PNG, 1 channel). */
  readonly mask: Buffer;
  readonly width: number;
  readonly height: number;
  /** Where the original lies on the canvas. */
  readonly original: Rect;
  /** The regions to diffuse one by one (each at most `resolution` square, neighbours overlapping). */
  readonly tiles: readonly Rect[];
}

/** Builds the canvas, mask and tile plan every engine's outpainting pipeline starts from. */
export async function outpaintCanvas(image: Buffer, options: OutpaintOptions): Promise<OutpaintCanvas> {
  const meta = await sharp(image).metadata();
  const w = meta.autoOrient?.width ?? meta.width!;
  const h = meta.autoOrient?.height ?? meta.height!;
  const expansion = options.expansion ?? [64];
  if (options.direction.length === 0)
    throw new EngineInputError('direction needs at least one of left, right, up, down');
  if (expansion.length !== 1 && expansion.length !== options.direction.length) {
    throw new EngineInputError(
      `expansion has ${expansion.length} values for ${options.direction.length} directions; give one value, or one per direction`,
    );
  }
  const add = { left: 0, right: 0, top: 0, bottom: 0 };
  options.direction.forEach((direction, i) => {
    const pixels = expansion.length === 1 ? expansion[0]! : expansion[i]!;
    const side = direction === 'up' ? 'top' : direction === 'down' ? 'bottom' : direction;
    add[side] = Math.max(add[side], pixels);
  });
  const width = w + add.left + add.right;
  const height = h + add.top + add.bottom;

  const canvas = await sharp(image)
    .rotate()
    .extend({ ...add, extendWith: 'copy' })
    .png()
    .toBuffer();

  const overlapX = Math.round((options.overlap ?? 0) * w);
  const overlapY = Math.round((options.overlap ?? 0) * h);
  // The part of the original the model must leave alone: shrunk by the overlap on extended sides.
  const keep = {
    left: add.left + (add.left ? overlapX : 0),
    top: add.top + (add.top ? overlapY : 0),
    right: width - add.right - (add.right ? overlapX : 0),
    bottom: height - add.bottom - (add.bottom ? overlapY : 0),
  };
  const maskData = Buffer.alloc(width * height, 255);
  for (let y = keep.top; y < keep.bottom; y++)
    maskData.fill(0, y * width + keep.left, y * width + keep.right);
  const mask = await sharp(maskData, { raw: { width, height, channels: 1 } })
    .png()
    .toBuffer();

  const resolution = options.resolution ?? 1024;
  const across = options.horizontal_tile ?? Math.ceil(width / resolution);
  const down = options.vertical_tile ?? Math.ceil(height / resolution);
  return {
    canvas,
    mask,
    width,
    height,
    original: { left: add.left, top: add.top, width: w, height: h },
    tiles: tilePlan(width, height, Math.max(1, across), Math.max(1, down), resolution),
  };
}

/**
 * Splits a canvas into `across` x `down` tiles of equal size, each at most `resolution` a side
 * where the count allows it; neighbours overlap by whatever the tile size leaves over (at least
 * an eighth of a tile when there is more than one), so the diffusion passes blend.
 */
export function tilePlan(
  width: number,
  height: number,
  across: number,
  down: number,
  resolution: number,
): Rect[] {
  const axis = (length: number, count: number): { start: number; size: number }[] => {
    if (count <= 1) return [{ start: 0, size: length }];
    const size = Math.min(
      length,
      Math.max(Math.ceil(length / count) + Math.ceil(length / count / 8), Math.min(resolution, length)),
    );
    const step = (length - size) / (count - 1);
    return Array.from({ length: count }, (_, i) => ({ start: Math.round(i * step), size }));
  };
  const tiles: Rect[] = [];
  for (const row of axis(height, down)) {
    for (const col of axis(width, across))
      tiles.push({ left: col.start, top: row.start, width: col.size, height: row.size });
  }
  return tiles;
}
