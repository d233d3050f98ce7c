import { blobKeyOfUrl, isValidBlobKey } from '../storage/blob-keys.ts';
import { sampleImage } from '../storage/sample-images.ts';
import type { BlobStore } from '../tasks/types.ts';
import {
  DEFAULT_MAX_IMAGE_BYTES,
  type ImageFetcher,
  InputFetchError,
  inspectImage,
} from './image-fetcher.ts';

/**
 * The API's own links (`<public url>/files/<key>`: uploads from /upload_images, earlier outputs)
 * are read from the blob store instead of over HTTP. Fetched over the network they would go back
 * to this very server, which on a single machine is a loopback address the SSRF guard refuses:
 * an uploaded image could not be used as an input on `npm start`. Read directly they cost no
 * request, and still get every check a fetched image gets (size, sniffed type, pixel cap, full
 * decode). The API's sample images are read the same way. Every other URL goes to the guarded
 * fetcher unchanged.
 */
export function withStoredFiles(fetcher: ImageFetcher, store: BlobStore, publicUrl: string): ImageFetcher {
  return {
    async fetchImage(url, field, signal) {
      const key = blobKeyOfUrl(url, publicUrl);
      if (key === undefined) return fetcher.fetchImage(url, field, signal);
      const blob = isValidBlobKey(key) ? await (sampleImage(key) ?? store.get(key)) : null;
      if (!blob) throw new InputFetchError(field, 'no file is stored at this link (HTTP 404)');
      if (blob.data.length > DEFAULT_MAX_IMAGE_BYTES) {
        throw new InputFetchError(field, `the file is larger than ${DEFAULT_MAX_IMAGE_BYTES} bytes`);
      }
      return { ...(await inspectImage(blob.data, field)), url };
    },
  };
}
