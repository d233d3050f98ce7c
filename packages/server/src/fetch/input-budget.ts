import { megapixels } from './image-header.ts';
import { InputFetchError } from './input-fetch-error.ts';

/** What one task's input images may come to (TASK_MAX_INPUT_IMAGES, _BYTES, _PIXELS). */
export interface InputLimits {
  /** Image links in the request, every field together; the same link twice counts twice. */
  readonly maxImages: number;
  /** Their bytes; the same link twice counts once (it is fetched once). */
  readonly maxBytes: number;
  /** Their width × height; the same link twice counts once (it is decoded once). */
  readonly maxPixels: number;
}

/**
 * Enough for every example and every client seen: a training of 40 twelve-megapixel photos, or
 * 64 links to images of 4 MB. The caps of one image (image-header.ts) still apply to each.
 */
export const DEFAULT_INPUT_LIMITS: InputLimits = {
  maxImages: 64,
  maxBytes: 256 * 1024 * 1024,
  maxPixels: 500_000_000,
};

/**
 * A task's allowance for the bytes and pixels of its inputs, taken by each image as soon as its
 * header is read, before it is decoded: a task over it fails at once, naming the image that took
 * it over and the setting, before any decode past the allowance is paid for.
 */
export class InputBudget {
  private bytes = 0;
  private pixels = 0;

  constructor(private readonly limits: InputLimits) {}

  take(field: string, size: number, area: number): void {
    this.bytes += size;
    this.pixels += area;
    if (this.bytes > this.limits.maxBytes) {
      throw new InputFetchError(
        field,
        `the task's input images come to ${bytes(this.bytes)}, above the ${bytes(this.limits.maxBytes)} a task may have (TASK_MAX_INPUT_BYTES)`,
      );
    }
    if (this.pixels > this.limits.maxPixels) {
      throw new InputFetchError(
        field,
        `the task's input images come to ${pixels(this.pixels)}, above the ${pixels(this.limits.maxPixels)} a task may have (TASK_MAX_INPUT_PIXELS)`,
      );
    }
  }
}

/** Megabytes from a tenth of one, bytes below. */
function bytes(n: number): string {
  return n >= 100 * 1024 ? `${Math.round((n / (1024 * 1024)) * 10) / 10} MB` : `${n} bytes`;
}

/** Megapixels from a tenth of one, pixels below. */
function pixels(n: number): string {
  return n >= 100_000 ? `${megapixels(n)} MP` : `${n} pixels`;
}
