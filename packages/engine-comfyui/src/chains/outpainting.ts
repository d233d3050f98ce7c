import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { Size } from './image-size.ts';
import type { RequestFields } from './request-fields.ts';
import { type Tile, tileEdgeMask } from './tiles.ts';

/** The contract's directions as the sides ImagePadForOutpaint pads. */
const SIDES = { left: 'left', right: 'right', up: 'top', down: 'bottom' } as const;

type Side = (typeof SIDES)[keyof typeof SIDES];
export type Padding = Record<Side, number>;

/** Tiles no narrower than this are painted (half SDXL's side: smaller ones would be mostly upscaled). */
export const MIN_TILE_SIDE = 512;
/** At most this many tiles along a side. */
export const MOST_TILES = 8;

/** How far the new pixels blend into the old ones without `overlap` (ImagePadForOutpaint's own default). */
export const OUTPAINT_FEATHERING = 40;

/**
 * `stretch_area` and `stretch_scale` as the original's outpainting page sends them (its values
 * "have been optimized for you"): where a request sends one of them, the other is this.
 */
export const PAGE_STRETCH = { area: 0.3, scale: 2 } as const;

/** The fields the outpainting chain reads. */
export interface OutpaintFields {
  readonly direction: readonly (keyof typeof SIDES)[] | undefined;
  readonly expansion: readonly number[] | undefined;
  readonly overlap?: number | undefined;
  readonly stretch_area?: number | undefined;
  readonly stretch_scale?: number | undefined;
  readonly horizontal_tile?: number | undefined;
  readonly vertical_tile?: number | undefined;
}

/**
 * `direction` with `expansion` (pixels per direction in the same order, or one value for all) as
 * padding on each side; a direction named twice is padded twice.
 */
export function outpaintPadding(fields: RequestFields<OutpaintFields>): Padding {
  const directions = fields.list('direction');
  const expansion = fields.list('expansion');
  if (expansion.length !== 1 && expansion.length !== directions.length) {
    fields.refuse(
      'expansion',
      `${expansion.length} value(s) for ${directions.length} direction(s); send one for all, or one per direction`,
    );
  }
  const padding = { left: 0, right: 0, top: 0, bottom: 0 };
  directions.forEach((direction, i) => {
    padding[SIDES[direction]] += expansion[expansion.length === 1 ? 0 : i]!;
  });
  return padding;
}

/** The grown canvas of a picture of `size`. */
export function grownSize(size: Size, padding: Padding): Size {
  return {
    width: size.width + padding.left + padding.right,
    height: size.height + padding.top + padding.bottom,
  };
}

/**
 * The blend band (`overlap`): how many pixels of the old picture the new border blends into, a
 * share of the grown canvas's longer side where the request sends one (the original's 0.02 of a
 * 1152 px canvas is 23 px), else ImagePadForOutpaint's 40 px; `strength` scales it (1: all of it).
 */
export function blendWidth(
  fields: RequestFields<OutpaintFields>,
  canvas: Size | undefined,
  strength: number,
) {
  const overlap = fields.optionalNumber('overlap');
  const full =
    overlap !== undefined && canvas ? overlap * Math.max(canvas.width, canvas.height) : OUTPAINT_FEATHERING;
  return Math.round(full * strength);
}

export const OUTPAINT_NODES: readonly NodeClass[] = ['ImagePadForOutpaint'];

/**
 * The picture on a larger canvas, and the mask of the new part (to be painted), `feathering` px of
 * the old picture's edge blending into it.
 */
export function padForOutpaint(
  w: Workflow,
  image: Link<'IMAGE'>,
  padding: Padding,
  feathering: number,
): { pixels: Link<'IMAGE'>; mask: Link<'MASK'> } {
  const [pixels, mask] = w.node('ImagePadForOutpaint', { image, ...padding, feathering }).outputs;
  return { pixels, mask };
}

export const STRETCH_NODES: readonly NodeClass[] = ['ImageCrop', 'ImageScale', 'ImageCompositeMasked'];

/** Why stretching values stretch nothing, as the task's note and `requires.ignores` say it. */
export const NO_STRETCH = {
  stretch_area: 'a share of 0 or less stretches nothing, so the new border is painted from grey',
  stretch_scale: 'a scale of 1 or less does not widen the edge, so the new border is painted from grey',
} as const;

/** Why a tile count is not painted as asked, as the task's note and `requires.ignores` say it. */
export const TILE_COUNT_WHY = `fewer than one tile paints the canvas in one, and more than it holds (none smaller than ${MIN_TILE_SIDE} px, at most ${MOST_TILES} a side) in as many as it holds`;

/** The stretch a request asks for, or the note of why it stretches nothing, or undefined when it asks for none. */
export function stretchOf(
  fields: RequestFields<OutpaintFields>,
): { area: number; scale: number } | { note: string } | undefined {
  if (!fields.has('stretch_area') && !fields.has('stretch_scale')) return undefined;
  const area = fields.optionalNumber('stretch_area') ?? PAGE_STRETCH.area;
  const scale = fields.optionalNumber('stretch_scale') ?? PAGE_STRETCH.scale;
  if (area <= 0) return { note: `stretch_area: ${area} is ${NO_STRETCH.stretch_area}` };
  if (scale <= 1) return { note: `stretch_scale: ${scale} is ${NO_STRETCH.stretch_scale}` };
  // More than the whole picture is the whole picture.
  return { area: Math.min(area, 1), scale };
}

/**
 * Stretching before padding (`stretch_area`, `stretch_scale`): on each side that grows, the band of
 * the picture along it, `stretch_area` of the picture deep, is stretched outward by `stretch_scale`
 * (further where the band is too thin to fill the new border) and its outer part laid on the new
 * border, so the border starts from the picture's own edge continued rather than from grey. The
 * sides are filled left and right first, then top and bottom across the whole width, which fills
 * the corners. The picture itself is never covered: only the new border is drawn on.
 */
export function stretchIntoBorder(
  w: Workflow,
  canvas: Link<'IMAGE'>,
  picture: Size,
  padding: Padding,
  stretch: { area: number; scale: number },
): Link<'IMAGE'> {
  const grown = grownSize(picture, padding);
  let filled = canvas;
  const fill = (
    band: { x: number; y: number; width: number; height: number },
    stretched: Size,
    outer: { x: number; y: number; width: number; height: number },
    at: { x: number; y: number },
  ) => {
    const cut = w.node('ImageCrop', { image: filled, ...band }).out(0);
    const wide = w
      .node('ImageScale', { image: cut, upscale_method: 'lanczos', ...stretched, crop: 'disabled' })
      .out(0);
    const part = w.node('ImageCrop', { image: wide, ...outer }).out(0);
    filled = w
      .node('ImageCompositeMasked', { destination: filled, source: part, ...at, resize_source: false })
      .out(0);
  };
  // The band's depth: `area` of the picture, no deeper than a stretch by `scale` needs to fill the border.
  const depth = (side: number, border: number) =>
    Math.max(1, Math.min(Math.round(stretch.area * side), Math.ceil(border / (stretch.scale - 1))));
  const { left, right, top, bottom } = padding;
  const rows = { y: top, height: picture.height };
  if (right > 0) {
    const d = depth(picture.width, right);
    fill(
      { x: left + picture.width - d, ...rows, width: d },
      { width: d + right, height: picture.height },
      { x: d, y: 0, width: right, height: picture.height },
      { x: left + picture.width, y: top },
    );
  }
  if (left > 0) {
    const d = depth(picture.width, left);
    fill(
      { x: left, ...rows, width: d },
      { width: d + left, height: picture.height },
      { x: 0, y: 0, width: left, height: picture.height },
      { x: 0, y: top },
    );
  }
  const columns = { x: 0, width: grown.width };
  if (bottom > 0) {
    const d = depth(picture.height, bottom);
    fill(
      { ...columns, y: top + picture.height - d, height: d },
      { width: grown.width, height: d + bottom },
      { x: 0, y: d, width: grown.width, height: bottom },
      { x: 0, y: top + picture.height },
    );
  }
  if (top > 0) {
    const d = depth(picture.height, top);
    fill(
      { ...columns, y: top, height: d },
      { width: grown.width, height: d + top },
      { x: 0, y: 0, width: grown.width, height: top },
      { x: 0, y: 0 },
    );
  }
  return filled;
}

/** How far neighbouring tiles overlap, blended across, so no seam shows between them. */
export const TILE_OVERLAP = 64;

export type OutpaintTile = Tile;

/**
 * How many tiles a side is painted in (`horizontal_tile`, `vertical_tile`): as asked, but no
 * fewer than one and none narrower than MIN_TILE_SIDE (at most MOST_TILES); where that changes the
 * count, a note says so.
 */
export function tileCount(
  w: Workflow,
  field: 'horizontal_tile' | 'vertical_tile',
  asked: number | undefined,
  length: number,
): number {
  if (asked === undefined) return 1;
  const most = Math.max(1, Math.min(MOST_TILES, Math.floor(length / MIN_TILE_SIDE)));
  const painted = asked < 1 ? 1 : Math.min(asked, most);
  if (painted !== asked) {
    w.note(`${field}: ${asked} along the ${length} px canvas: ${TILE_COUNT_WHY}, here ${painted}`);
  }
  return painted;
}

/** Where `count` tiles of equal length start along `length` px, overlapping by TILE_OVERLAP. */
function tileSpans(length: number, count: number): { start: number; size: number }[] {
  if (count <= 1) return [{ start: 0, size: length }];
  const size = Math.min(length, Math.ceil((length + (count - 1) * TILE_OVERLAP) / count));
  const step = (length - size) / (count - 1);
  return Array.from({ length: count }, (_, i) => ({ start: Math.round(i * step), size }));
}

/**
 * The grid of tiles over the grown canvas that hold part of what is painted (the new border and the
 * blend band): tiles wholly inside the old picture are left as they are.
 */
export function outpaintTiles(
  canvas: Size,
  columns: number,
  rows: number,
  picture: Size,
  padding: Padding,
  blend: number,
): OutpaintTile[] {
  // The part of the canvas that is never painted: the old picture less its blend band.
  const kept = {
    left: padding.left + (padding.left > 0 ? blend : 0),
    top: padding.top + (padding.top > 0 ? blend : 0),
    right: padding.left + picture.width - (padding.right > 0 ? blend : 0),
    bottom: padding.top + picture.height - (padding.bottom > 0 ? blend : 0),
  };
  return tileSpans(canvas.height, rows).flatMap(({ start: y, size: height }) =>
    tileSpans(canvas.width, columns)
      .map(({ start: x, size: width }) => ({ x, y, width, height }))
      .filter(
        (tile) =>
          tile.x < kept.left ||
          tile.y < kept.top ||
          tile.x + tile.width > kept.right ||
          tile.y + tile.height > kept.bottom,
      ),
  );
}

export const OUTPAINT_TILE_NODES: readonly NodeClass[] = [
  'ImageCrop',
  'CropMask',
  'SolidMask',
  'FeatherMask',
  'MaskComposite',
  'ImageScale',
  'ImageCompositeMasked',
];

/**
 * The tiles painted one after another on the canvas (a batch of the samples): each is cut from the
 * canvas as the tiles before it left it, painted by `paint` (which answers the tile's pictures at
 * any size), scaled back and laid over the canvas through the outpainting mask, feathered where it
 * overlaps the tiles before it.
 */
export function paintTiles(
  w: Workflow,
  canvas: Link<'IMAGE'>,
  mask: Link<'MASK'>,
  tiles: readonly OutpaintTile[],
  paint: (pixels: Link<'IMAGE'>, mask: Link<'MASK'>) => Link<'IMAGE'>,
): Link<'IMAGE'> {
  let painted = canvas;
  for (const tile of tiles) {
    const pixels = w.node('ImageCrop', { image: painted, ...tile }).out(0);
    const tileMask = w.node('CropMask', { mask, ...tile }).out(0);
    const drawn = w
      .node('ImageScale', {
        image: paint(pixels, tileMask),
        upscale_method: 'lanczos',
        width: tile.width,
        height: tile.height,
        crop: 'disabled',
      })
      .out(0);
    const edges = tileEdgeMask(w, tile, TILE_OVERLAP);
    const through = w
      .node('MaskComposite', { destination: tileMask, source: edges, x: 0, y: 0, operation: 'multiply' })
      .out(0);
    painted = w
      .node('ImageCompositeMasked', {
        destination: painted,
        source: drawn,
        x: tile.x,
        y: tile.y,
        resize_source: false,
        mask: through,
      })
      .out(0);
  }
  return painted;
}
