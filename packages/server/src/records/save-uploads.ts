import type { Pool } from '@imagegen/db';
import { downloadUrl, extensionFor, newBlobKeys } from '../storage/blob-keys.ts';
import type { BlobStore } from '../tasks/types.ts';
import { insertUpload } from './sql/insertUpload.ts';

/**
 * Stores images an owner sent (already inspected: type, size, pixels, and decoded whole) as uploads, kept
 * for RETENTION_UPLOADS_DAYS, and answers their links, which work as inputs of any request: the
 * upload endpoint's, and the OpenAI Images API's edits.
 */
export async function saveUploads(
  options: { readonly pool: Pool; readonly store: BlobStore; readonly publicUrl: string },
  ownerId: string,
  images: readonly { readonly data: Buffer; readonly contentType: string }[],
): Promise<string[]> {
  const urls: string[] = [];
  const keys = newBlobKeys(images.map((image, n) => `upload${n}.${extensionFor(image.contentType)}`));
  for (const [n, image] of images.entries()) {
    const key = keys[n]!;
    await options.store.put(key, image.data, image.contentType);
    await insertUpload(options.pool, {
      ownerId,
      blobKey: key,
      contentType: image.contentType,
      sizeBytes: image.data.length,
    });
    urls.push(downloadUrl(options.publicUrl, key));
  }
  return urls;
}
