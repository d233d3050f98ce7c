import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { Size } from './image-size.ts';

/**
 * Resampling a large picture tile by tile, as tiled upscalers (Ultimate SD Upscale) do: one
 * sample never exceeds a tile, however large the picture, so memory and the model's own
 * resolution bound it. Tiles overlap, and each is laid over the ones before it through a mask
 * feathered across the overlap, so no seam shows.
 */

export interface Tile {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** Where tiles of at most `tile` px start along a side of `length` px, overlapping by at least `overlap`. */
function starts(length: number, tile: number, overlap: number): number[] {
  if (length <= tile) return [0];
  const count = Math.ceil((length - overlap) / (tile - overlap));
  const step = (length - tile) / (count - 1);
  return Array.from({ length: count }, (_, i) => Math.round(i * step));
}

/** The tiles that cover `size`, row by row: each at most `tile` x `tile` px, overlapping by `overlap`. */
export function tilesOf(size: Size, tile: number, overlap: number): Tile[] {
  const width = Math.min(tile, size.width);
  const height = Math.min(tile, size.height);
  return starts(size.height, tile, overlap).flatMap((y) =>
    starts(size.width, tile, overlap).map((x) => ({ x, y, width, height })),
  );
}

export const TILE_NODES: readonly NodeClass[] = [
  'ImageCrop',
  'SolidMask',
  'FeatherMask',
  'ImageCompositeMasked',
];

/**
 * A tile's mask: whole inside, feathered over `overlap` px on the sides where it overlaps the tiles
 * laid before it (those to its left and above).
 */
export function tileEdgeMask(w: Workflow, tile: Tile, overlap: number): Link<'MASK'> {
  const solid = w.node('SolidMask', { value: 1, width: tile.width, height: tile.height }).out(0);
  if (tile.x === 0 && tile.y === 0) return solid;
  return w
    .node('FeatherMask', {
      mask: solid,
      left: tile.x > 0 ? overlap : 0,
      top: tile.y > 0 ? overlap : 0,
      right: 0,
      bottom: 0,
    })
    .out(0);
}

/**
 * `picture` (of `size`) with each tile replaced by what `resample` makes of it, laid over the
 * tiles before it through a mask feathered over `overlap` px on the sides that overlap them.
 */
export function resampleTiles(
  w: Workflow,
  picture: Link<'IMAGE'>,
  size: Size,
  tiles: readonly Tile[],
  overlap: number,
  resample: (tile: Link<'IMAGE'>) => Link<'IMAGE'>,
): Link<'IMAGE'> {
  let canvas = picture;
  for (const tile of tiles) {
    const whole = tile.width === size.width && tile.height === size.height;
    const crop = whole ? picture : w.node('ImageCrop', { image: picture, ...tile }).out(0);
    const mask = tileEdgeMask(w, tile, overlap);
    canvas = w
      .node('ImageCompositeMasked', {
        destination: canvas,
        source: resample(crop),
        x: tile.x,
        y: tile.y,
        // Where it is laid, as it is: the VAE works on 8 px blocks, so a tile whose side is no
        // multiple of 8 comes back a few pixels short, and those keep the picture's own pixels.
        resize_source: false,
        mask,
      })
      .out(0);
  }
  return canvas;
}
