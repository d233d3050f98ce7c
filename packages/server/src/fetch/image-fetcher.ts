import type { InputImage } from '@imagegen/engines';
import { checkRanges } from './address-policy.ts';
import { checkDecodes, warmDecodeChecks } from './decode-check.ts';
import { type ImageHeader, MAX_IMAGE_BYTES, readImageHeader } from './image-header.ts';
import type { InputBudget } from './input-budget.ts';
import { InputFetchError } from './input-fetch-error.ts';
import { type InputSpool, inMemory, type KeptBytes } from './input-spool.ts';
import { GuardError, type GuardOptions, guardedFetch } from './ssrf-guard.ts';

export { InputFetchError };

/**
 * Fetches the input images of a task: every URL field of every request goes through here.
 *
 * Order matters: the address is checked before connecting, the size while streaming, the header's
 * limits (pixels, sides, aspect: image-header.ts) and the task's allowance (input-budget.ts)
 * before anything is decoded, and only then is the whole image decoded once, in a decode process
 * (decode-check.ts), to prove it is not truncated or corrupt.
 */

export interface ImageFetcherOptions extends GuardOptions {
  /** Largest body, in bytes (20 MB). */
  readonly maxBytes?: number;
}

export interface FetchImageOptions {
  readonly signal?: AbortSignal;
  /** The task's allowance for its inputs' bytes and pixels; absent: each image's caps alone. */
  readonly budget?: InputBudget;
  /** Keeps the bytes in the attempt's folder rather than in memory. Absent: in memory. */
  readonly spool?: InputSpool;
}

export interface ImageFetcher {
  /** `field` names the request field in errors, e.g. `init_image` or `init_images[1]`. */
  fetchImage(url: string, field: string, options?: FetchImageOptions): Promise<InputImage>;
}

export const DEFAULT_MAX_IMAGE_BYTES = MAX_IMAGE_BYTES;

export function createImageFetcher(options: ImageFetcherOptions = {}): ImageFetcher {
  checkRanges(options.allowedRanges ?? []);
  const maxBytes = options.maxBytes ?? MAX_IMAGE_BYTES;
  return {
    async fetchImage(url, field, { signal, budget, spool } = {}) {
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
      const data = response.body;
      const header = await readImageHeader(data, field);
      budget?.take(field, data.length, header.width * header.height);
      const kept = spool ? await spool.keep(data) : inMemory(data);
      await checkDecodes(kept.path ?? data, header, field, signal);
      return inputImage(header, data.length, url, kept);
    },
  };
}

/**
 * The fetcher the environment asks for: IMAGEGEN_ALLOW_PRIVATE_URLS=1 admits loopback. Its decode
 * process starts now, so the first input image does not wait for it.
 */
export function imageFetcherFromEnv(env: NodeJS.ProcessEnv = process.env): ImageFetcher {
  warmDecodeChecks();
  return createImageFetcher({ allowPrivate: env.IMAGEGEN_ALLOW_PRIVATE_URLS === '1' });
}

/**
 * Checks bytes that claim to be an image outside a task (an upload through image_files): the
 * header's limits, then one full decode. Throws InputFetchError naming the field.
 */
export async function inspectImage(data: Buffer, field: string, signal?: AbortSignal): Promise<ImageHeader> {
  const header = await readImageHeader(data, field);
  await checkDecodes(data, header, field, signal);
  return header;
}

/** An input image as engines see it: its facts, and its bytes read back when needed. */
export function inputImage(header: ImageHeader, size: number, url: string, kept: KeptBytes): InputImage {
  return { ...header, size, url, read: kept.read };
}
