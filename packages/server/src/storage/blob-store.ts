/**
 * Where output images and uploads live. The API serves them at `GET /files/<key>`; the key is the
 * credential (its first segment is 22 random base64url characters), so nothing else guards them.
 *
 * The local directory is the default. Workers on other machines need shared storage: an S3
 * implementation fills this same interface (put/get/delete by key, content type kept).
 */
export interface BlobStore {
  put(key: string, data: Buffer, contentType: string): Promise<void>;
  /** Null when no blob has that key (yet: queued_image_urls links exist before their image). */
  get(key: string): Promise<StoredBlob | null>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
}

export interface StoredBlob {
  readonly data: Buffer;
  readonly contentType: string;
}

/**
 * Keys are relative paths of plain segments (`<random>/<file_prefix><n>.png`): no `..`, no
 * absolute paths, no backslashes, nothing a store could turn into a path outside itself.
 */
export function isValidBlobKey(key: string): boolean {
  if (key.length === 0 || key.length > 512) return false;
  return key.split('/').every((segment) => /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/.test(segment));
}
