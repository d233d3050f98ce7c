/**
 * An S3-protocol server on loopback for the tests: s3rver (npm), in this process, over a temporary
 * folder. It speaks the real wire protocol (SigV4 signatures, presigned URLs, 404 NoSuchKey), so
 * the SDK code under test is the code that runs against AWS or MinIO, and it needs no binary.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { S3BlobStore, type S3BlobStoreOptions } from '../../src/storage/s3-blob-store.ts';

/** s3rver's fixed credentials; it refuses requests signed with others. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

export interface S3Server {
  readonly endpoint: string;
  readonly bucket: string;
  /** A store on the bucket (a new client each time, as another process would have). */
  store(options?: Partial<S3BlobStoreOptions>): S3BlobStore;
  close(): Promise<void>;
}

export async function startS3Server(bucket = 'imagegen-test'): Promise<S3Server> {
  const directory = await mkdtemp(path.join(tmpdir(), 'imagegen-s3-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const stores: S3BlobStore[] = [];
  return {
    endpoint,
    bucket,
    store(options = {}) {
      const store = new S3BlobStore({
        bucket,
        endpoint,
        forcePathStyle: true,
        credentials: S3RVER_CREDENTIALS,
        ...options,
      });
      stores.push(store);
      return store;
    },
    async close() {
      for (const store of stores) store.close();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
