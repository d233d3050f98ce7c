/**
 * OpenAI's `size` (`1024x1024`, `1536x1024`, `auto`…) onto a model family's own sizes: the one
 * nearest in shape, then in area, so a wide request stays wide and a family is never asked for a
 * size it was not trained at.
 */

export interface ImageSize {
  readonly width: number;
  readonly height: number;
}

/** The largest side a client may ask for; any size up to it is mapped, not refused. */
export const MAX_REQUESTED_SIDE = 16_384;

/** `WIDTHxHEIGHT` (`x` or `×`, any case), each side 1 to MAX_REQUESTED_SIDE; null otherwise. */
export function parseSize(text: string): ImageSize | null {
  const match = /^\s*(\d{1,5})\s*[x×]\s*(\d{1,5})\s*$/i.exec(text);
  if (!match) return null;
  const width = Number(match[1]);
  const height = Number(match[2]);
  if (width < 1 || height < 1 || width > MAX_REQUESTED_SIDE || height > MAX_REQUESTED_SIDE) return null;
  return { width, height };
}

/** The size of `sizes` nearest to `wanted`: first by aspect ratio, then by area (both on a log scale). */
export function nearestSize(wanted: ImageSize, sizes: readonly ImageSize[]): ImageSize {
  const shape = (size: ImageSize) => Math.log(size.width / size.height);
  const area = (size: ImageSize) => Math.log(size.width * size.height);
  let best = sizes[0]!;
  let bestKey = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
  for (const size of sizes) {
    // Shapes within 1 % count as the same shape: then the area decides.
    const key = [
      Math.round(Math.abs(shape(size) - shape(wanted)) * 100),
      Math.abs(area(size) - area(wanted)),
    ];
    if (key[0]! < bestKey[0]! || (key[0] === bestKey[0] && key[1]! < bestKey[1]!)) {
      best = size;
      bestKey = key;
    }
  }
  return best;
}

export function sizeText(size: ImageSize): string {
  return `${size.width}x${size.height}`;
}
