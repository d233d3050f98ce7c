import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import type { Picture } from './graph-shapes.ts';

/**
 * The fake's images: a gradient between two colours taken from a hash of the producing graph and
 * the image's place in its batch. The same graph always gives the same pixels; another seed,
 * prompt or size gives others.
 */

function pixels(picture: Picture, index: number, width: number, height: number): Buffer {
  const hash = createHash('sha256').update(`${picture.key}#${index}`).digest();
  // t runs 0 → 1 along a direction the hash picks: across the diagonal (x + y) or along x. Either
  // way a row is a run of one colour ramp, so the ramp is computed once and rows are copied from it.
  const diagonal = hash[6]! % 2 === 0;
  const span = diagonal ? width + height - 1 : width;
  const ramp = Buffer.alloc(span * 3);
  for (let n = 0; n < span; n++) {
    const t = n / Math.max(1, span - 1);
    for (let c = 0; c < 3; c++) ramp[n * 3 + c] = Math.round(hash[c]! * (1 - t) + hash[c + 3]! * t);
  }
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    const from = diagonal ? y : 0;
    ramp.copy(raw, y * width * 3, from * 3, (from + width) * 3);
  }
  return raw;
}

/**
 * The PNG of one image of a batch, at the picture's size, with `text` as tEXt chunks after its
 * header, as ComfyUI's SaveImage writes its graph (`prompt`, and the client's `workflow`).
 */
export async function renderPng(
  picture: Picture,
  index: number,
  text: Readonly<Record<string, string>> = {},
): Promise<Buffer> {
  const { width, height } = picture;
  const png = await sharp(pixels(picture, index, width, height), { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
  const chunks = Object.entries(text).map(([keyword, value]) => textChunk(keyword, value));
  // After the signature (8 bytes) and IHDR (25): where PIL's PngInfo puts them.
  return chunks.length === 0 ? png : Buffer.concat([png.subarray(0, 33), ...chunks, png.subarray(33)]);
}

function textChunk(keyword: string, value: string): Buffer {
  const body = Buffer.concat([Buffer.from(`tEXt${keyword}\0`, 'latin1'), Buffer.from(value, 'latin1')]);
  const chunk = Buffer.alloc(body.length + 8);
  chunk.writeUInt32BE(body.length - 4, 0);
  body.copy(chunk, 4);
  chunk.writeUInt32BE(crc32(body), body.length + 4);
  return chunk;
}

/** A sampler's step preview: a JPEG at latent size (an eighth), as ComfyUI's fast previews are. */
export function renderPreview(picture: Picture, step: number): Promise<Buffer> {
  const width = Math.max(1, Math.round(picture.width / 8));
  const height = Math.max(1, Math.round(picture.height / 8));
  return sharp(pixels(picture, step, width, height), { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 95 })
    .toBuffer();
}
