/**
 * Which shipped ESRGAN weights answer each upscaling request. The cpu engine cannot run
 * Real-ESRGAN itself (no npm package ships it), so every spec model name maps to the nearest
 * UpscalerJS ESRGAN model that does ship: quoted by the docs and the OpenAPI descriptions.
 */

export type EsrganSize = 'slim' | 'medium' | 'thick';
export type EsrganScale = 2 | 3 | 4;

export interface EsrganChoice {
  /** The npm package that carries the weights. */
  readonly package: `@upscalerjs/esrgan-${EsrganSize}`;
  readonly size: EsrganSize;
  /** Why this is the nearest shipped model, in one line for the docs. */
  readonly why: string;
}

/** The spec's superresolution `model_name` values and the shipped model each runs on. */
export const SUPERRESOLUTION_MODEL_MAP: Readonly<Record<string, EsrganChoice>> = {
  RealESRGAN_x4plus: {
    package: '@upscalerjs/esrgan-medium',
    size: 'medium',
    why: 'general-purpose x4 RRDB model; the medium ESRGAN is the closest quality that runs on a CPU in seconds',
  },
  RealESRGAN_x2plus: {
    package: '@upscalerjs/esrgan-medium',
    size: 'medium',
    why: 'the x2 general model; the medium ESRGAN ships native x2 weights',
  },
  'realesr-general-x4v3': {
    package: '@upscalerjs/esrgan-slim',
    size: 'slim',
    why: 'the small, fast general model; the slim ESRGAN is its lightweight counterpart',
  },
};

/** `/upscaler/v1` with `type: deblur`: restore and enlarge x2 on the medium model. */
export const UPSCALER_DEBLUR: { readonly size: EsrganSize; readonly scale: EsrganScale } = {
  size: 'medium',
  scale: 2,
};

/**
 * The native model scale to run for a requested factor: the smallest shipped scale at or above
 * it (x2 below 2), so the result is only ever reduced afterwards, never enlarged by resampling.
 */
export function modelScaleFor(scaleFactor: number): EsrganScale {
  if (scaleFactor <= 2) return 2;
  if (scaleFactor <= 3) return 3;
  return 4;
}
