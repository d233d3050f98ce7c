/**
 * Which shipped ESRGAN weights answer each upscaling request. The table itself lives in the
 * contract (engine-notes.ts), so the OpenAPI descriptions and the docs quote the very data the
 * cpu engine runs on; this file adds what only the engine needs.
 */
import {
  SUPERRESOLUTION_MODEL_MAP as CONTRACT_MODEL_MAP,
  type EsrganChoice,
  type EsrganScale,
} from '@imagegen/contract';

export type { EsrganChoice, EsrganScale, EsrganSize } from '@imagegen/contract';
export { UPSCALER_DEBLUR } from '@imagegen/contract';

/** Keyed by any string, so a request's `model_name` (a hash, too) can be looked up directly. */
export const SUPERRESOLUTION_MODEL_MAP: Readonly<Record<string, EsrganChoice | undefined>> =
  CONTRACT_MODEL_MAP;

/**
 * The native model scale to run for a requested factor: the smallest shipped scale at or above
 * it (x2 below 2), so the result is only ever reduced afterwards, never enlarged by resampling.
 */
export function modelScaleFor(scaleFactor: number): EsrganScale {
  if (scaleFactor <= 2) return 2;
  if (scaleFactor <= 3) return 3;
  return 4;
}
