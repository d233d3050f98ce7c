/** The messages between the engine (main thread) and its inference worker threads. */

export interface RgbImage {
  /** Packed RGB bytes, row by row. */
  readonly data: Uint8Array;
  readonly width: number;
  readonly height: number;
}

export interface GrayImage {
  readonly data: Uint8Array;
  readonly width: number;
  readonly height: number;
}

export interface FaceBox {
  /** Box in pixels of the image given. */
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly score: number;
  readonly age?: number;
  readonly gender?: string;
}

export interface OpMap {
  /** ISNet (imgly's medium weights) cut-out mask (0..255) at the image's own size. */
  'isnet-mask': { args: { image: RgbImage }; result: GrayImage };
  /** Refines a soft mask along its edges, guided by the image (alpha matting). */
  'alpha-matting': { args: { image: RgbImage; mask: GrayImage }; result: GrayImage };
  /** One ESRGAN patch at the model's native scale. */
  'esrgan-patch': {
    args: { image: RgbImage; size: 'slim' | 'medium' | 'thick'; scale: 2 | 3 | 4 };
    result: RgbImage;
  };
  /** NSFW class scores (nsfwjs MobileNetV2 on a 224 x 224 RGB image). */
  nsfw: { args: { image: RgbImage }; result: Record<string, number> };
  /** Faces found by @vladmandic/human. */
  faces: { args: { image: RgbImage }; result: FaceBox[] };
  /** COCO objects found by @vladmandic/human's CenterNet. */
  objects: { args: { image: RgbImage }; result: { label: string; score: number }[] };
  /** Loads the named models (models.ts) ahead of their first job: IMAGEGEN_CPU_PRELOAD. */
  load: { args: { models: string[] }; result: null };
}

export type OpName = keyof OpMap;

export interface WorkRequest<K extends OpName = OpName> {
  readonly id: number;
  readonly op: K;
  readonly args: OpMap[K]['args'];
}

/**
 * Every reply carries the models its thread has loaded, once per load, in load order, and the
 * size of its tfjs WASM memory (tfjs-runtime.ts), which never shrinks while the thread lives.
 */
export type WorkReply = { readonly id: number; readonly loads: string[]; readonly heapBytes: number } & (
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly error: string }
);
