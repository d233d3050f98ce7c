import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isValidBlobKey } from '../../src/storage/blob-keys.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-blobs-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the local blob store', () => {
  it('gives back the bytes and content type it was given', async () => {
    const store = new LocalBlobStore(dir);
    const data = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    await store.put('Q2hhbmdlTWVQbGVhc2UxMg/cat_0.png', data, 'image/png');
    const blob = await store.get('Q2hhbmdlTWVQbGVhc2UxMg/cat_0.png');
    expect(blob?.contentType).toBe('image/png');
    expect(blob?.data.equals(data)).toBe(true);
  });

  it('answers null for a key it does not hold', async () => {
    expect(await new LocalBlobStore(dir).get('Q2hhbmdlTWVQbGVhc2UxMg/missing.png')).toBeNull();
  });

  it('deletes a blob, and deleting it again is not an error', async () => {
    const store = new LocalBlobStore(dir);
    await store.put('abcdefghijklmnopqrstuv/0.png', Buffer.from('x'), 'image/png');
    await store.delete('abcdefghijklmnopqrstuv/0.png');
    await store.delete('abcdefghijklmnopqrstuv/0.png');
    expect(await store.get('abcdefghijklmnopqrstuv/0.png')).toBeNull();
  });

  it('leaves no temporary files behind', async () => {
    const store = new LocalBlobStore(dir);
    await store.put('abcdefghijklmnopqrstuv/0.png', Buffer.from('x'), 'image/png');
    expect(await readdir(path.join(dir, 'objects', 'abcdefghijklmnopqrstuv'))).toEqual(['0.png']);
  });

  it.each(['../escape.png', 'a/../../b.png', '/etc/passwd', 'a\\b.png', 'a//b.png', '.hidden/x', ''])(
    'refuses the key %j, which could leave its directory',
    async (key) => {
      const store = new LocalBlobStore(dir);
      expect(isValidBlobKey(key)).toBe(false);
      await expect(store.put(key, Buffer.from('x'), 'image/png')).rejects.toThrow('is not valid');
      expect(await store.get(key)).toBeNull();
    },
  );
});
