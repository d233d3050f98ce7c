import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobStoreFromEnv } from '../../src/storage/blob-store-from-env.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';
import { S3BlobStore } from '../../src/storage/s3-blob-store.ts';
import { type S3Server, startS3Server } from '../support/s3-server.ts';
import { blobStoreContract } from './blob-store-contract.ts';

let s3: S3Server;
let store: S3BlobStore;
beforeAll(async () => {
  s3 = await startS3Server();
  store = s3.store();
});
afterAll(async () => {
  await s3.close();
});

blobStoreContract('the S3 blob store', () => store);

describe('the S3 blob store', () => {
  it('hands out a presigned URL that serves the blob, and none for a missing key', async () => {
    const presigned = s3.store({ presignSeconds: 60 });
    await store.put('abcdefghijklmnopqrstuv/p.png', Buffer.from('signed bytes'), 'image/png');
    const url = await presigned.downloadRedirect!('abcdefghijklmnopqrstuv/p.png');
    expect(url).toContain('X-Amz-Expires=60');
    expect(url).toContain('X-Amz-Signature=');
    const response = await fetch(url!);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(await response.text()).toBe('signed bytes');
    expect(await presigned.downloadRedirect!('abcdefghijklmnopqrstuv/none.png')).toBeNull();
    expect(await presigned.downloadRedirect!('../escape.png')).toBeNull();
  });

  it('has no redirect when the API proxies the files', () => {
    expect(s3.store().downloadRedirect).toBeUndefined();
  });
});

describe('the store the environment picks', () => {
  it('is the local folder without S3_BUCKET, and a bucket with it', () => {
    expect(blobStoreFromEnv({ IMAGEGEN_DATA_DIR: '/tmp/x' })).toBeInstanceOf(LocalBlobStore);
    const bucket = blobStoreFromEnv({
      S3_BUCKET: 'b',
      S3_ENDPOINT: s3.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
    });
    expect(bucket).toBeInstanceOf(S3BlobStore);
    expect(bucket.downloadRedirect).toBeDefined();
    expect(blobStoreFromEnv({ S3_BUCKET: 'b', FILES_VIA: 'proxy' }).downloadRedirect).toBeUndefined();
    (bucket as S3BlobStore).close();
  });

  it.each([
    [{ S3_BUCKET: 'b', FILES_VIA: 'cdn' }, 'FILES_VIA=cdn: expected presigned or proxy'],
    [{ FILES_VIA: 'proxy' }, 'FILES_VIA applies to an S3 bucket only'],
    [{ S3_BUCKET: 'b', S3_PRESIGN_SECONDS: '0' }, 'S3_PRESIGN_SECONDS=0'],
    [{ S3_BUCKET: 'b', S3_PRESIGN_SECONDS: '604801' }, 'S3_PRESIGN_SECONDS=604801'],
    [{ S3_BUCKET: 'b', S3_FORCE_PATH_STYLE: 'yes' }, 'S3_FORCE_PATH_STYLE=yes: expected true or false'],
  ])('refuses %j with a clear message', (env, message) => {
    expect(() => blobStoreFromEnv(env)).toThrow(message);
  });
});
