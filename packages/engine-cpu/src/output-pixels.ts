import { EngineInputError } from '@imagegen/engines';

/**
 * The most pixels one cpu job makes: 4096 × 4096. Upscaling costs in proportion to what it makes
 * (the model runs on every output pixel, on a CPU) and holds the whole result in memory, so a
 * 143 KB picture of 7000 × 7000 at scale 4 would run for hours and hold gigabytes. Above it a job
 * fails at once, before anything is decoded.
 */
export const DEFAULT_MAX_OUTPUT_PIXELS = 4096 * 4096;

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
 * Fails the job at once when the image the model makes from `field`'s image (its size times
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
    `${field}: ${input.width}×${input.height} ${how} ${width}×${height} (${megapixels(width * height)} MP), ` +
      `above the ${megapixels(maxPixels)} MP the cpu engine makes (IMAGEGEN_CPU_MAX_OUTPUT_PIXELS)`,
  );
}

function megapixels(pixels: number): string {
  return (Math.round(pixels / 100_000) / 10).toString();
}
