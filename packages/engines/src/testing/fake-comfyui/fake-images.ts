import { createHash } from 'node:crypto';
import sharp from 'sharp';
import type { Picture } from './graph-shapes.ts';

/**
 * The fake's images: a gradient between two colours taken from a hash of the producing graph and
 * the image's place in its batch. The same graph always gives the same pixels; another seed,
 * prompt or size gives others.
 */

function pixels(picture: Picture, index: number, width: number, height: number): Buffer {
  const hash = createHash('sha256').update(`${picture.key}#${index}`).digest();
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // t runs 0 → 1 along a direction the hash picks.
      const t = hash[6]! % 2 === 0 ? (x + y) / Math.max(1, width + height - 2) : x / Math.max(1, width - 1);
      const at = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) raw[at + c] = Math.round(hash[c]! * (1 - t) + hash[c + 3]! * t);
    }
  }
  return raw;
}

/** The PNG of one image of a batch, at the picture's size. */
export function renderPng(picture: Picture, index: number): Promise<Buffer> {
  const { width, height } = picture;
  return sharp(pixels(picture, index, width, height), { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
}

/** A sampler's step preview: a JPEG at latent size (an eighth), as ComfyUI's fast previews are. */
export function renderPreview(picture: Picture, step: number): Promise<Buffer> {
  const width = Math.max(1, Math.round(picture.width / 8));
  const height = Math.max(1, Math.round(picture.height / 8));
  return sharp(pixels(picture, step, width, height), { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 95 })
    .toBuffer();
}
