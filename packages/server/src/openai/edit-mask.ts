import sharp from 'sharp';
import type { ImageSize } from './image-sizes.ts';

/**
 * OpenAI's mask as the inpainting pipelines read one: OpenAI's marks where to edit by full
 * transparency, ours by white. A mask with an alpha channel becomes its alpha inverted
 * (transparent → white, opaque → black); one without alpha is taken as ours already. It is
 * stretched to the image's size, as the image and its mask must match.
 */
export async function repaintMask(mask: Buffer, size: ImageSize): Promise<Buffer> {
  const image = sharp(mask);
  const { hasAlpha } = await image.metadata();
  const plane = hasAlpha ? image.extractChannel('alpha').negate() : image.grayscale();
  return plane.resize(size.width, size.height, { fit: 'fill' }).toColourspace('b-w').png().toBuffer();
}
