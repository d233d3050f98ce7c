import { EngineInputError, type InputImage, type OutputImage } from '@imagegen/engines';
import sharp, { type Sharp } from 'sharp';
import type { GrayImage, RgbImage } from './inference-protocol.ts';
import { withSharpSlot } from './sharp-slots.ts';

/** Decoding to packed RGB for the models, and encoding results as PNG, all through sharp. */

export async function decodeRgb(bytes: Buffer, maxSide?: number): Promise<RgbImage> {
  let pipeline = sharp(bytes, { failOn: 'error' }).rotate();
  if (maxSide) pipeline = pipeline.resize(maxSide, maxSide, { fit: 'inside', withoutEnlargement: true });
  const { data, info } = await withSharpSlot(() =>
    pipeline.removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true }),
  );
  return {
    data: new Uint8Array(data.buffer, data.byteOffset, data.length),
    width: info.width,
    height: info.height,
  };
}

/**
 * An input image of a request field, decoded: a file that does not decode fails the task with a
 * message naming the field, never with the decoder's own words (libvips' texts name its internals).
 */
export async function decodeInput(image: InputImage, field: string, maxSide?: number): Promise<RgbImage> {
  const bytes = await image.read();
  try {
    return await decodeRgb(bytes, maxSide);
  } catch {
    throw new EngineInputError(`${field}: the image could not be decoded (the file is truncated or corrupt)`);
  }
}

export function rgbSharp(image: RgbImage): Sharp {
  return sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } });
}

export function graySharp(image: GrayImage): Sharp {
  return sharp(image.data, { raw: { width: image.width, height: image.height, channels: 1 } });
}

export async function toGray(pipeline: Sharp): Promise<GrayImage> {
  const { data, info } = await withSharpSlot(() =>
    pipeline.extractChannel(0).raw().toBuffer({ resolveWithObject: true }),
  );
  return {
    data: new Uint8Array(data.buffer, data.byteOffset, data.length),
    width: info.width,
    height: info.height,
  };
}

export async function png(pipeline: Sharp): Promise<OutputImage> {
  const { data, info } = await withSharpSlot(() => pipeline.png().toBuffer({ resolveWithObject: true }));
  return { data, contentType: 'image/png', width: info.width, height: info.height };
}

/** The one image a request field holds (the worker fetched it already). */
export function imageField(
  images: Readonly<Record<string, InputImage | readonly InputImage[]>>,
  field: string,
): InputImage {
  const value = images[field];
  const image = Array.isArray(value) ? value[0] : value;
  if (!image) throw new Error(`the worker passed no image for ${field}`);
  return image as InputImage;
}

/** Every image a request field holds, as a list. */
export function imageList(
  images: Readonly<Record<string, InputImage | readonly InputImage[]>>,
  field: string,
): InputImage[] {
  const value = images[field];
  if (value === undefined) return [];
  return Array.isArray(value) ? [...(value as InputImage[])] : [value as InputImage];
}
