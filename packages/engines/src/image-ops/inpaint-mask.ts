import sharp from 'sharp';
import { EngineInputError } from '../engine.ts';

export interface InpaintMaskOptions {
  /** Colour distance (0..441, RGB Euclidean) a pixel may have from its seed and still join. Default 40. */
  readonly tolerance?: number;
  /** Pixels the mask grows by at the end, as Inpaint-Anything dilates SAM's mask (default 15). */
  readonly dilate?: number;
  /**
   * An optional object mask (1 channel, same size, white = object), e.g. a cut-out mask: a seed on
   * a white region selects that connected object instead of a colour region.
   */
  readonly objects?: Buffer;
}

/** Parses `input_coords` (x, y pairs) and checks each point lies on the image. */
export function seedPoints(
  coords: readonly number[],
  width: number,
  height: number,
): { x: number; y: number }[] {
  if (coords.length === 0 || coords.length % 2 !== 0) {
    throw new EngineInputError(`input_coords needs x, y pairs; got ${coords.length} number(s)`);
  }
  const points: { x: number; y: number }[] = [];
  for (let i = 0; i < coords.length; i += 2) {
    const x = coords[i]!;
    const y = coords[i + 1]!;
    if (x < 0 || y < 0 || x >= width || y >= height) {
      throw new EngineInputError(
        `input_coords point (${x}, ${y}) lies outside the ${width} x ${height} image`,
      );
    }
    points.push({ x, y });
  }
  return points;
}

/**
 * The mask of the object(s) under `input_coords` for inpaint-anything (white = replace). Each seed
 * grows the region of similar colour connected to it (on a lightly smoothed copy, so texture and
 * noise do not stop it), or takes the connected object of `objects` it lies on; the union is
 * closed and dilated. Returns a 1-channel PNG the size of the image.
 */
export async function inpaintMaskFromCoords(
  image: Buffer,
  coords: readonly number[],
  options: InpaintMaskOptions = {},
): Promise<{ mask: Buffer; width: number; height: number; area: number }> {
  const { data, info } = await sharp(image)
    .rotate()
    .removeAlpha()
    .blur(1.2)
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const points = seedPoints(coords, width, height);
  const tolerance = options.tolerance ?? 40;
  const region = new Uint8Array(width * height);
  const objects = options.objects;
  for (const { x, y } of points) {
    const seed = y * width + x;
    if (objects && objects[seed]! > 127) {
      flood(region, width, height, seed, (i) => objects[i]! > 127);
      continue;
    }
    const r = data[3 * seed]!;
    const g = data[3 * seed + 1]!;
    const b = data[3 * seed + 2]!;
    const limit = tolerance * tolerance;
    flood(region, width, height, seed, (i) => {
      const dr = data[3 * i]! - r;
      const dg = data[3 * i + 1]! - g;
      const db = data[3 * i + 2]! - b;
      return dr * dr + dg * dg + db * db <= limit;
    });
  }
  let mask: Buffer = Buffer.from(region.map((v) => (v ? 255 : 0)));
  // Close small holes (specks the fill skipped), then grow by `dilate`.
  mask = await sharp(mask, { raw: { width, height, channels: 1 } })
    .median(5)
    .extractChannel(0)
    .raw()
    .toBuffer();
  const dilate = options.dilate ?? 15;
  // Our own dilation: sharp's dilate treats a white-on-black mask's black as the foreground.
  if (dilate > 0) mask = dilateSquare(mask, width, height, dilate);
  let area = 0;
  for (const v of mask) if (v > 127) area++;
  if (area === 0) throw new EngineInputError('input_coords selects nothing on the image');
  return {
    mask: await sharp(mask, { raw: { width, height, channels: 1 } })
      .png()
      .toBuffer(),
    width,
    height,
    area,
  };
}

/** 4-connected flood fill from `seed` over pixels passing `inside`, marking `region`. */
function flood(
  region: Uint8Array,
  width: number,
  height: number,
  seed: number,
  inside: (i: number) => boolean,
): void {
  const stack = [seed];
  const seen = new Uint8Array(width * height);
  seen[seed] = 1;
  while (stack.length > 0) {
    const i = stack.pop()!;
    region[i] = 1;
    const x = i % width;
    const next = [x > 0 ? i - 1 : -1, x < width - 1 ? i + 1 : -1, i - width, i + width];
    for (const n of next) {
      if (n < 0 || n >= width * height || seen[n]) continue;
      seen[n] = 1;
      if (inside(n)) stack.push(n);
    }
  }
}

/** Grows white regions by `r` pixels (a square structuring element, as two separable max passes). */
function dilateSquare(mask: Buffer, width: number, height: number, r: number): Buffer {
  const rows = Buffer.alloc(mask.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let on = 0;
      for (let k = Math.max(0, x - r); k <= Math.min(width - 1, x + r) && !on; k++) on = mask[y * width + k]!;
      rows[y * width + x] = on;
    }
  }
  const out = Buffer.alloc(mask.length);
  for (let x = 0; x < width; x++) {
    for (let y = 0; y < height; y++) {
      let on = 0;
      for (let k = Math.max(0, y - r); k <= Math.min(height - 1, y + r) && !on; k++)
        on = rows[k * width + x]!;
      out[y * width + x] = on;
    }
  }
  return out;
}
