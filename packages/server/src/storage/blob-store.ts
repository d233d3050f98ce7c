/**
 * Where output images and uploads live. The API serves them at `GET /files/<key>`; the key is the
 * credential (blob-keys.ts), so nothing else guards them.
 *
 * The local directory is the default (local-blob-store.ts); processes on several machines share
 * a bucket (s3-blob-store.ts). blob-store-from-env.ts picks one.
 */
export interface BlobStore {
  /** `signal` stops a write still on its way (a bucket's upload); a local write is too short to stop. */
  put(key: string, data: Buffer, contentType: string, options?: BlobOptions): Promise<void>;
  /**
   * Null when no blob has that key (yet: queued_image_urls links exist before their image), and for
   * a key that names a folder of blobs rather than one. `signal` stops the read.
   */
  get(key: string, options?: BlobOptions): Promise<StoredBlob | null>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Present when clients should fetch blobs from the store itself: `/files/<key>` then answers a
   * redirect to this URL (fresh on every request, so links in task results never expire) instead
   * of the bytes. Null when no blob has that key.
   */
  readonly downloadRedirect?: (key: string) => Promise<string | null>;
}

export interface StoredBlob {
  readonly data: Buffer;
  readonly contentType: string;
}

export interface BlobOptions {
  readonly signal?: AbortSignal;
}
