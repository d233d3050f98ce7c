import { EngineInputError } from '@imagegen/engines';
import { DEFAULT_MAX_OUTPUT_PIXELS } from './check-rules.ts';

export { DEFAULT_MAX_OUTPUT_PIXELS };

/** IMAGEGEN_CPU_MAX_OUTPUT_PIXELS: a whole number of pixels (width × height), at least 1. */
export function parseMaxOutputPixels(setting: string | undefined): number {
  const text = (setting ?? '').trim();
  if (text === '') return DEFAULT_MAX_OUTPUT_PIXELS;
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1) {
    throw new Error(
      `IMAGEGEN_CPU_MAX_OUTPUT_PIXELS must be a whole number of pixels, not ${JSON.stringify(setting)}`,
    );
  }
  return Number(text);
}

/**
 * Fails the job at once, before anything is decoded, when the image the model makes from `field`'s image (its size times
 * `scale`) has more pixels than `maxPixels`; the message says what the request would make and
 * what the engine allows.
 */
export function checkOutputPixels(
  field: string,
  input: { readonly width: number; readonly height: number },
  scale: number,
  maxPixels: number,
): void {
  const width = input.width * scale;
  const height = input.height * scale;
  if (width * height <= maxPixels) return;
  const how = scale === 1 ? 'makes' : `at scale ${scale} makes`;
  throw new EngineInputError(
    `${field}: ${input.width}×${input.height} ${how} ${width}×${height} (${pixels(width * height)}), ` +
      `above the ${pixels(maxPixels)} the cpu engine makes (IMAGEGEN_CPU_MAX_OUTPUT_PIXELS)`,
  );
}

/** Megapixels from a tenth of one, pixels below. */
function pixels(n: number): string {
  return n >= 100_000 ? `${Math.round(n / 100_000) / 10} MP` : `${n} pixels`;
}
