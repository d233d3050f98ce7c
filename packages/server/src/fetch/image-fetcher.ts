import type { InputImage } from '@imagegen/engines';
import sharp, { type Metadata } from 'sharp';
import { checkRanges } from './address-policy.ts';
import { describeStart, SHARP_FORMAT, sniffImageType } from './image-sniff.ts';
import { GuardError, type GuardOptions, guardedFetch } from './ssrf-guard.ts';

/**
 * Fetches the input images of a task: every URL field of every request goes through here.
 *
 * Order matters: the address is checked before connecting, the size while streaming, the pixel
 * count from the header before anything is decoded (a 50 KB PNG can claim 2 gigapixels), and only
 * then is the whole image decoded once to prove it is not truncated or corrupt.
 */

export interface ImageFetcherOptions extends GuardOptions {
  /** Largest body, in bytes (20 MB). */
  readonly maxBytes?: number;
  /** Largest width × height (50 megapixels). */
  readonly maxPixels?: number;
}

export interface ImageFetcher {
  /** `field` names the request field in errors, e.g. `init_image` or `init_images[1]`. */
  fetchImage(url: string, field: string, signal?: AbortSignal): Promise<InputImage>;
}

/** The task's owner reads this message as the task's error: it names the field and the reason. */
export class InputFetchError extends Error {
  override readonly name = 'InputFetchError';
  constructor(
    readonly field: string,
    readonly reason: string,
    /** The image host timed out, failed or answered 5xx/429: a later attempt may succeed. */
    readonly transient = false,
  ) {
    super(`${field}: ${reason}`);
  }
}

export const DEFAULT_MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const DEFAULT_MAX_PIXELS = 50_000_000;

export function createImageFetcher(options: ImageFetcherOptions = {}): ImageFetcher {
  checkRanges(options.allowedRanges ?? []);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_IMAGE_BYTES;
  const maxPixels = options.maxPixels ?? DEFAULT_MAX_PIXELS;
  return {
    async fetchImage(url, field, signal) {
      let response: Awaited<ReturnType<typeof guardedFetch>>;
      try {
        response = await guardedFetch(
          url,
          { method: 'GET', headers: { accept: 'image/*' }, maxBytes, ...(signal && { signal }) },
          options,
        );
      } catch (error) {
        if (error instanceof GuardError) throw new InputFetchError(field, error.message, error.transient);
        throw error;
      }
      if (response.status !== 200) {
        const transient = response.status >= 500 || response.status === 429;
        throw new InputFetchError(field, `server answered HTTP ${response.status}`, transient);
      }
      return { ...(await inspectImage(response.body, field, maxPixels)), url };
    },
  };
}

/** The fetcher the environment asks for: IMAGEGEN_ALLOW_PRIVATE_URLS=1 admits loopback. */
export function imageFetcherFromEnv(env: NodeJS.ProcessEnv = process.env): ImageFetcher {
  return createImageFetcher({ allowPrivate: env.IMAGEGEN_ALLOW_PRIVATE_URLS === '1' });
}

/**
 * Checks bytes that claim to be an image (fetched, or uploaded through image_files): sniffed type,
 * pixel cap from the header, one full decode. Throws InputFetchError naming the field.
 */
export async function inspectImage(
  data: Buffer,
  field: string,
  maxPixels = DEFAULT_MAX_PIXELS,
): Promise<Omit<InputImage, 'url'>> {
  if (data.length === 0) throw new InputFetchError(field, 'the image is empty (0 bytes)');
  const contentType = sniffImageType(data);
  if (!contentType) {
    throw new InputFetchError(
      field,
      `content is not a PNG, JPEG, WebP or GIF image (it starts with ${describeStart(data)})`,
    );
  }
  let metadata: Metadata;
  try {
    metadata = await sharp(data, { limitInputPixels: false }).metadata();
  } catch {
    throw new InputFetchError(field, `the ${SHARP_FORMAT[contentType].toUpperCase()} header is unreadable`);
  }
  const { width, height } = metadata;
  if (metadata.format !== SHARP_FORMAT[contentType] || !width || !height) {
    throw new InputFetchError(field, 'the image header is inconsistent');
  }
  if (width * height > maxPixels) {
    throw new InputFetchError(
      field,
      `image is ${width}×${height} (${megapixels(width * height)} MP), above the ${megapixels(maxPixels)} MP limit`,
    );
  }
  try {
    // One full decode: a truncated or corrupt file fails here rather than inside an engine.
    await sharp(data, { failOn: 'truncated', limitInputPixels: maxPixels }).stats();
  } catch {
    throw new InputFetchError(field, 'the image data is truncated or corrupt');
  }
  return { data, contentType, width, height };
}

function megapixels(pixels: number): string {
  return (Math.round(pixels / 100_000) / 10).toString();
}
