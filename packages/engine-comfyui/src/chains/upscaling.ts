import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import { type Size, timesSize } from './image-size.ts';
import type { RequestFields } from './request-fields.ts';

/** An ESRGAN-family model in the server's `upscale_models` folder and its native scale. */
export interface UpscaleModel {
  readonly file: string;
  readonly scale: number;
}

/** The upscalers the contract names (superresolution's `model_name`), as their usual files. */
export const UPSCALE_MODELS = {
  RealESRGAN_x4plus: { file: 'RealESRGAN_x4plus.pth', scale: 4 },
  RealESRGAN_x2plus: { file: 'RealESRGAN_x2plus.pth', scale: 2 },
  'realesr-general-x4v3': { file: 'realesr-general-x4v3.pth', scale: 4 },
} as const satisfies Record<string, UpscaleModel>;

/** The model behind the SD `upscale` field. */
export const GENERAL_UPSCALER: UpscaleModel = UPSCALE_MODELS.RealESRGAN_x4plus;

export const UPSCALE_NODES: readonly NodeClass[] = [
  'UpscaleModelLoader',
  'ImageUpscaleWithModel',
  'ImageScaleBy',
  'ImageScale',
];

/**
 * ImageScaleBy's smallest `scale_by`: ComfyUI refuses a graph with less. A factor that far below
 * the model's scale (a quarter of a hundredth for an x4 model) resizes to the exact pixel size
 * instead, as ImageScale can.
 */
const SMALLEST_SCALE_BY = 0.01;

/**
 * The model at its native scale, then resized to exactly `factor` (ImageScaleBy rounds the same
 * way a request's size would: round(side x factor)). `size`, the picture's own, where known:
 * a factor below what ImageScaleBy takes resizes to its pixels (at least one each way).
 */
export function upscaleWith(
  w: Workflow,
  image: Link<'IMAGE'>,
  model: UpscaleModel,
  factor: number,
  size?: Size,
): Link<'IMAGE'> {
  const upscale_model = w.node('UpscaleModelLoader', { model_name: model.file }).out(0);
  const upscaled = w.node('ImageUpscaleWithModel', { upscale_model, image }).out(0);
  if (factor === model.scale) return upscaled;
  const ratio = factor / model.scale;
  if (ratio < SMALLEST_SCALE_BY && size) {
    const { width, height } = timesSize(size, factor);
    return w
      .node('ImageScale', {
        image: upscaled,
        upscale_method: 'lanczos',
        width: Math.max(1, width),
        height: Math.max(1, height),
        crop: 'disabled',
      })
      .out(0);
  }
  // Without the size (a graph only inspected, never run): in steps ImageScaleBy takes.
  const steps = ratio < SMALLEST_SCALE_BY ? Math.ceil(Math.log(ratio) / Math.log(SMALLEST_SCALE_BY)) : 1;
  let resized = upscaled;
  for (let step = 0; step < steps; step++) {
    resized = w
      .node('ImageScaleBy', { image: resized, upscale_method: 'lanczos', scale_by: ratio ** (1 / steps) })
      .out(0);
  }
  return resized;
}

/** The field the SD upscale reads: SD1.5's requests have it, SDXL's do not. */
export interface UpscaleFields {
  readonly upscale?: string | undefined;
}

/** The SD `upscale` field ('2x', '1.5x', up to '4x'), or undefined when it is not sent. */
export function upscaleFactor(fields: RequestFields<UpscaleFields>): number | undefined {
  if (!fields.has('upscale')) return undefined;
  const text = fields.string('upscale');
  const factor = Number(/^\s*(\d+(?:\.\d+)?)\s*x?\s*$/i.exec(text)?.[1]);
  if (!(factor >= 1 && factor <= 4)) {
    fields.refuse('upscale', `'${text}' is not an upscale factor from '1x' to '4x' (such as '2x')`);
  }
  return factor;
}

/** Applies the SD `upscale` field, when sent, with the general upscaler. */
export function applyUpscaleField(
  w: Workflow,
  fields: RequestFields<UpscaleFields>,
  image: Link<'IMAGE'>,
): Link<'IMAGE'> {
  const factor = upscaleFactor(fields);
  return factor === undefined || factor === 1 ? image : upscaleWith(w, image, GENERAL_UPSCALER, factor);
}
