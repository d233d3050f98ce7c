/**
 * Where output images and uploads live. The API serves them at `GET /files/<key>`; the key is the
 * credential (blob-keys.ts), so nothing else guards them.
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
