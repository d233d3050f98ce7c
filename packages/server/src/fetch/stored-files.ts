import { blobKeyOfUrl, isValidBlobKey } from '../storage/blob-keys.ts';
import { sampleImage } from '../storage/sample-images.ts';
import type { BlobStore } from '../tasks/types.ts';
import { type ImageFetcher, InputFetchError, inputImage } from './image-fetcher.ts';
import { MAX_IMAGE_BYTES, readImageHeader } from './image-header.ts';
import { inMemory } from './input-spool.ts';

/**
 * The API's own links (`<public url>/files/<key>`: uploads from /upload_images, earlier outputs)
 * are read from the blob store instead of over HTTP. Fetched over the network they would go back
 * to this very server, which on a single machine is a loopback address the SSRF guard refuses:
 * an uploaded image could not be used as an input on `npm start`. Read directly they cost no
 * request. The API's sample images are read the same way. Every other URL goes to the guarded
 * fetcher unchanged.
 *
 * They are checked as far as their header (size caps, the task's allowance) and not decoded
 * again: every file the store holds was checked whole when it was stored (an upload), or was
 * made by an engine (an output). An image is decoded once, not once at upload and again for every
 * field that names it.
 */
export function withStoredFiles(fetcher: ImageFetcher, store: BlobStore, publicUrl: string): ImageFetcher {
  return {
    async fetchImage(url, field, options = {}) {
      const key = blobKeyOfUrl(url, publicUrl);
      if (key === undefined) return fetcher.fetchImage(url, field, options);
      const { signal, budget, spool } = options;
      const blob = isValidBlobKey(key) ? await read(store, key, field, signal) : null;
      if (!blob) throw new InputFetchError(field, 'no file is stored at this link (HTTP 404)');
      if (blob.data.length > MAX_IMAGE_BYTES) {
        throw new InputFetchError(field, `the file is larger than ${MAX_IMAGE_BYTES} bytes`);
      }
      const header = await readImageHeader(blob.data, field);
      budget?.take(field, blob.data.length, header.width * header.height);
      const kept = spool ? await spool.keep(blob.data) : inMemory(blob.data);
      return inputImage(header, blob.data.length, url, kept);
    },
  };
}

/** A stored file's bytes; a store that fails says so in words fit for the task's owner. */
async function read(store: BlobStore, key: string, field: string, signal?: AbortSignal) {
  try {
    return await (sampleImage(key) ?? store.get(key, signal ? { signal } : {}));
  } catch (error) {
    if (signal?.aborted) throw error;
    // The store's own text names its internals (a path on the worker, a bucket's request id).
    throw new InputFetchError(field, 'the stored file could not be read; try again later', true);
  }
}
