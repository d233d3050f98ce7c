import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { isValidBlobKey } from './blob-keys.ts';
import type { BlobOptions, BlobStore, StoredBlob } from './blob-store.ts';

export interface S3BlobStoreOptions {
  bucket: string;
  /** An S3-compatible store's address (MinIO, Ceph, R2...); AWS's own when unset. */
  endpoint?: string | undefined;
  region?: string | undefined;
  /** `<endpoint>/<bucket>/<key>` addresses, which most S3-compatible stores need. */
  forcePathStyle?: boolean;
  /** Explicit credentials (tests); otherwise the SDK's default chain (env, profile, instance role). */
  credentials?: S3ClientConfig['credentials'];
  /**
   * With a lifetime, `/files/<key>` answers a redirect to a URL presigned for that many seconds,
   * so the bytes go from the bucket to the client; without one the API proxies them.
   */
  presignSeconds?: number | undefined;
}

/**
 * A bucket as a blob store, for processes on several machines: the API, every worker and every
 * docs host read and write the same objects. Keys are the blob keys as they are (already plain
 * path segments, blob-keys.ts); the content type is the object's Content-Type.
 */
export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  readonly bucket: string;
  readonly downloadRedirect?: (key: string) => Promise<string | null>;

  constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      // The SDK needs a region even for stores that ignore it.
      region: options.region || 'us-east-1',
      forcePathStyle: options.forcePathStyle ?? false,
      ...(options.credentials ? { credentials: options.credentials } : {}),
      // Checksums only where S3 requires them: many S3-compatible stores reject the newer
      // checksum headers the SDK would otherwise add to every upload.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    const seconds = options.presignSeconds;
    if (seconds !== undefined) this.downloadRedirect = (key) => this.presignedUrl(key, seconds);
  }

  async put(key: string, data: Buffer, contentType: string, options: BlobOptions = {}): Promise<void> {
    this.check(key);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: data, ContentType: contentType }),
      sdkOptions(options),
    );
  }

  async get(key: string, options: BlobOptions = {}): Promise<StoredBlob | null> {
    if (!isValidBlobKey(key)) return null;
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key }),
        sdkOptions(options),
      );
      const data = Buffer.from((await object.Body?.transformToByteArray()) ?? []);
      return { data, contentType: object.ContentType ?? 'application/octet-stream' };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    this.check(key);
    // S3 answers a delete of a missing key with success, as the interface wants.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** A GET URL valid for `seconds`, or null when no blob has that key (checked first: a link to nothing would answer S3's own 403 or 404). */
  async presignedUrl(key: string, seconds: number): Promise<string | null> {
    if (!isValidBlobKey(key)) return null;
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), {
      expiresIn: seconds,
    });
  }

  close(): void {
    this.client.destroy();
  }

  private check(key: string): void {
    if (!isValidBlobKey(key)) throw new Error(`blob key ${JSON.stringify(key)} is not valid`);
  }
}

/** The SDK's per-call options: an aborted signal stops the request and its body. */
function sdkOptions(options: BlobOptions): { abortSignal?: AbortSignal } {
  return options.signal ? { abortSignal: options.signal } : {};
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}
