import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
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

  it('writes one file for a blob whose extension names its type, and a type file otherwise', async () => {
    const store = new LocalBlobStore(dir);
    await store.put('abcdefghijklmnopqrstuv/0.png', Buffer.from('x'), 'image/png');
    await store.put('abcdefghijklmnopqrstuv/1.jpg', Buffer.from('x'), 'image/jpeg');
    await expect(readdir(path.join(dir, 'types'))).rejects.toMatchObject({ code: 'ENOENT' });
    await store.put('abcdefghijklmnopqrstuv/2.png', Buffer.from('x'), 'image/webp');
    expect(await readdir(path.join(dir, 'types', 'abcdefghijklmnopqrstuv'))).toEqual(['2.png']);
  });

  it('reads the type files of a store written before types were implied by extensions', async () => {
    const store = new LocalBlobStore(dir);
    await mkdir(path.join(dir, 'objects', 'abcdefghijklmnopqrstuv'), { recursive: true });
    await mkdir(path.join(dir, 'types', 'abcdefghijklmnopqrstuv'), { recursive: true });
    await writeFile(path.join(dir, 'objects', 'abcdefghijklmnopqrstuv', '0.png'), 'x');
    await writeFile(path.join(dir, 'types', 'abcdefghijklmnopqrstuv', '0.png'), 'image/png');
    expect(await store.get('abcdefghijklmnopqrstuv/0.png')).toEqual({
      data: Buffer.from('x'),
      contentType: 'image/png',
    });
  });

  it('serves no download URLs of its own: the API sends the bytes', () => {
    const store: BlobStore = new LocalBlobStore(dir);
    expect(store.downloadRedirect).toBeUndefined();
  });
});
