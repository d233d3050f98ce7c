/**
 * Which shipped ESRGAN weights answer each upscaling request: the facts the engine runs on, which
 * its notes (engine-notes.ts) quote in the OpenAPI descriptions and the docs. Data only: reading it
 * loads no model.
 */
import type { SUPERRESOLUTION_MODELS } from '@imagegen/contract';

export type EsrganSize = 'slim' | 'medium' | 'thick';
export type EsrganScale = 2 | 3 | 4;

export interface EsrganChoice {
  /** The npm package that carries the weights. */
  readonly package: `@upscalerjs/esrgan-${EsrganSize}`;
  readonly size: EsrganSize;
  /** Why this is the nearest shipped model, in one line for the docs. */
  readonly why: string;
}

/**
 * Every superresolution `model_name` the API reference names, and the shipped UpscalerJS ESRGAN
 * weights it runs on: no npm package ships Real-ESRGAN itself, so each name maps to the nearest
 * model that does ship.
 */
export const SUPERRESOLUTION_MODEL_MAP: Readonly<
  Record<(typeof SUPERRESOLUTION_MODELS)[number], EsrganChoice>
> = {
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

/** The native scales the shipped ESRGAN weights come in. */
export const ESRGAN_NATIVE_SCALES: readonly EsrganScale[] = [2, 3, 4];

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
