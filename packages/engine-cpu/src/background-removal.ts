import type { OutputImage } from '@imagegen/engines';
import { findFaces } from './face-detection.ts';
import type { InferencePool } from './inference-pool.ts';
import type { GrayImage, RgbImage } from './inference-protocol.ts';
import { graySharp, png, rgbSharp, toGray } from './raw-image.ts';

export interface BackgroundRemovalOptions {
  /** Answer the mask itself (white = subject) instead of the cut-out. */
  readonly only_mask?: boolean;
  /** Keep the background and remove the subject: the mask is inverted. */
  readonly mask_background?: boolean;
  /** Clean the mask as rembg does: binary, opened, smoothed and thresholded again. */
  readonly post_process_mask?: boolean;
  /** Refine the mask's edges against the image (guided-filter matting in a trimap band). */
  readonly alpha_matting?: boolean;
  /** Keep every detected face wholly in the subject, so a face is never cut into. */
  readonly face_mask?: boolean;
}

/** ISNet (imgly's ONNX weights, run directly with onnxruntime-node) plus the request's options. */
export async function removeBackground(
  pool: InferencePool,
  image: RgbImage,
  options: BackgroundRemovalOptions,
  signal?: AbortSignal,
): Promise<{ output: OutputImage; faces?: number }> {
  const withSignal = signal ? { signal } : {};
  let mask = await pool.run('isnet-mask', { image }, withSignal);
  if (options.post_process_mask) {
    // sharp runs one pipeline's operations in its own fixed order, so each step is its own pass.
    const binary = await toGray(graySharp(mask).threshold(128));
    const opened = await toGray(graySharp(binary).median(3));
    const smooth = await toGray(graySharp(opened).blur(2));
    mask = await toGray(graySharp(smooth).threshold(128));
  }
  let faces: number | undefined;
  if (options.face_mask) {
    const found = await findFaces(pool, image, signal);
    faces = found.length;
    mask = fillEllipses(mask, found);
  }
  if (options.alpha_matting) {
    mask = await pool.run('alpha-matting', { image, mask }, withSignal);
  }
  if (options.mask_background) mask = await toGray(graySharp(mask).negate());

  if (options.only_mask)
    return {
      output: await png(graySharp(mask).toColourspace('b-w')),
      ...(faces !== undefined ? { faces } : {}),
    };
  const cutout = rgbSharp(image).joinChannel(
    Buffer.from(mask.data.buffer, mask.data.byteOffset, mask.data.length),
    {
      raw: { width: mask.width, height: mask.height, channels: 1 },
    },
  );
  return { output: await png(cutout), ...(faces !== undefined ? { faces } : {}) };
}

/** Sets the ellipse inscribed in each box (grown by a tenth, for hair and chin) to fully opaque. */
function fillEllipses(
  mask: GrayImage,
  boxes: readonly { x: number; y: number; width: number; height: number }[],
): GrayImage {
  const data = Uint8Array.from(mask.data);
  for (const box of boxes) {
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    const rx = (box.width / 2) * 1.1;
    const ry = (box.height / 2) * 1.2;
    for (let y = Math.max(0, Math.floor(cy - ry)); y < Math.min(mask.height, Math.ceil(cy + ry)); y++) {
      for (let x = Math.max(0, Math.floor(cx - rx)); x < Math.min(mask.width, Math.ceil(cx + rx)); x++) {
        const dx = (x - cx) / rx;
        const dy = (y - cy) / ry;
        if (dx * dx + dy * dy <= 1) data[y * mask.width + x] = 255;
      }
    }
  }
  return { data, width: mask.width, height: mask.height };
}
