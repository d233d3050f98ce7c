import type { InferencePool } from './inference-pool.ts';
import type { FaceBox, RgbImage } from './inference-protocol.ts';
import { rgbSharp } from './raw-image.ts';
import { withSharpSlot } from './sharp-slots.ts';

/** Faces are detected on a copy at most this wide or high: enough for faces of 20 px and up. */
const DETECT_SIDE = 800;

/** Faces in an image (via @vladmandic/human), with boxes in the image's own pixels. */
export async function findFaces(
  pool: InferencePool,
  image: RgbImage,
  signal?: AbortSignal,
): Promise<FaceBox[]> {
  const ratio = Math.min(1, DETECT_SIDE / Math.max(image.width, image.height));
  let input = image;
  if (ratio < 1) {
    const { data, info } = await withSharpSlot(() =>
      rgbSharp(image)
        .resize(Math.round(image.width * ratio), Math.round(image.height * ratio), { fit: 'fill' })
        .raw()
        .toBuffer({ resolveWithObject: true }),
    );
    input = {
      data: new Uint8Array(data.buffer, data.byteOffset, data.length),
      width: info.width,
      height: info.height,
    };
  }
  const faces = await pool.run('faces', { image: input }, signal ? { signal } : {});
  return faces.map((f) => ({
    ...f,
    x: f.x / ratio,
    y: f.y / ratio,
    width: f.width / ratio,
    height: f.height / ratio,
  }));
}
