import sharp, { type Metadata } from 'sharp';
import { describeStart, SHARP_FORMAT, type SniffedImageType, sniffImageType } from './image-sniff.ts';
import { InputFetchError } from './input-fetch-error.ts';

/**
 * The limits every input image meets, fetched or uploaded, decided from its header before any of
 * it is decoded: a 200 KB PNG can claim 2 gigapixels, or 50 million rows of one pixel each (which
 * passes a pixel cap and still costs libvips minutes, row by row).
 */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/** Width × height. */
export const MAX_IMAGE_PIXELS = 50_000_000;
/** Either side: more than any engine takes, and libvips' own limit for WebP. */
export const MAX_IMAGE_SIDE = 16_384;
/** The long side over the short one: a 1536 × 24 banner passes. */
export const MAX_IMAGE_ASPECT = 64;

export interface ImageHeader {
  readonly contentType: SniffedImageType;
  readonly width: number;
  readonly height: number;
}

/**
 * Reads what bytes that claim to be an image say of themselves (the sniffed type, and the size from
 * their header, which libvips reads without decoding pixels) and checks them against the limits
 * above. Throws InputFetchError naming the field.
 */
export async function readImageHeader(data: Buffer, field: string): Promise<ImageHeader> {
  if (data.length === 0) throw new InputFetchError(field, 'the image is empty (0 bytes)');
  const contentType = sniffImageType(data);
  if (!contentType) {
    throw new InputFetchError(
      field,
      `content is not a PNG, JPEG, WebP or GIF image (it starts with ${describeStart(data)})`,
    );
  }
  let metadata: Metadata;
  try {
    metadata = await sharp(data, { limitInputPixels: false }).metadata();
  } catch {
    throw new InputFetchError(field, `the ${SHARP_FORMAT[contentType].toUpperCase()} header is unreadable`);
  }
  const { width, height } = metadata;
  if (metadata.format !== SHARP_FORMAT[contentType] || !width || !height) {
    throw new InputFetchError(field, 'the image header is inconsistent');
  }
  checkImageSize(field, width, height);
  return { contentType, width, height };
}

/** The pixel, side and aspect limits, in that order; throws InputFetchError naming the field. */
export function checkImageSize(field: string, width: number, height: number): void {
  const size = `${width}×${height}`;
  if (width * height > MAX_IMAGE_PIXELS) {
    throw new InputFetchError(
      field,
      `image is ${size} (${megapixels(width * height)} MP), above the ${megapixels(MAX_IMAGE_PIXELS)} MP limit`,
    );
  }
  if (Math.max(width, height) > MAX_IMAGE_SIDE) {
    throw new InputFetchError(field, `image is ${size}; each side may be at most ${MAX_IMAGE_SIDE} pixels`);
  }
  if (Math.max(width, height) > MAX_IMAGE_ASPECT * Math.min(width, height)) {
    throw new InputFetchError(
      field,
      `image is ${size}; its long side may be at most ${MAX_IMAGE_ASPECT} times its short side`,
    );
  }
}

export function megapixels(pixels: number): string {
  return (Math.round(pixels / 100_000) / 10).toString();
}
