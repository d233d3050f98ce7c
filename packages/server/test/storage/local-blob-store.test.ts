import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../src/storage/blob-store.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';
import { blobStoreContract } from './blob-store-contract.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-blobs-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

blobStoreContract('the local blob store', () => new LocalBlobStore(dir));

describe('the local blob store', () => {
  it('leaves no temporary files behind', async () => {
    const store = new LocalBlobStore(dir);
    await store.put('abcdefghijklmnopqrstuv/0.png', Buffer.from('x'), 'image/png');
    expect(await readdir(path.join(dir, 'objects', 'abcdefghijklmnopqrstuv'))).toEqual(['0.png']);
  });

  it('serves no download URLs of its own: the API sends the bytes', () => {
    const store: BlobStore = new LocalBlobStore(dir);
    expect(store.downloadRedirect).toBeUndefined();
  });
});
