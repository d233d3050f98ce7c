/**
 * What every blob store must do, as one suite: local-blob-store.test.ts and s3-blob-store.test.ts
 * run it against their store, so both stores are held to the same behaviour.
 */
import { describe, expect, it } from 'vitest';
import { isValidBlobKey } from '../../src/storage/blob-keys.ts';
import type { BlobStore } from '../../src/storage/blob-store.ts';

export function blobStoreContract(name: string, store: () => BlobStore): void {
  describe(`${name}: the blob store contract`, () => {
    it('gives back the bytes and content type it was given', async () => {
      const data = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
      await store().put('Q2hhbmdlTWVQbGVhc2UxMg/cat_0.png', data, 'image/png');
      const blob = await store().get('Q2hhbmdlTWVQbGVhc2UxMg/cat_0.png');
      expect(blob?.contentType).toBe('image/png');
      expect(blob?.data.equals(data)).toBe(true);
    });

    it('keeps each blob its own content type, and a second put replaces the first', async () => {
      await store().put('abcdefghijklmnopqrstuv/a.webp', Buffer.from('webp'), 'image/webp');
      await store().put('abcdefghijklmnopqrstuv/b.jpg', Buffer.from('one'), 'image/jpeg');
      await store().put('abcdefghijklmnopqrstuv/b.jpg', Buffer.from('two'), 'image/jpeg');
      expect(await store().get('abcdefghijklmnopqrstuv/a.webp')).toEqual({
        data: Buffer.from('webp'),
        contentType: 'image/webp',
      });
      expect((await store().get('abcdefghijklmnopqrstuv/b.jpg'))?.data.toString()).toBe('two');
    });

    it('keeps a content type other than the one its extension names, and a put that changes it', async () => {
      await store().put('abcdefghijklmnopqrstuv/0.png', Buffer.from('jpeg bytes'), 'image/jpeg');
      expect((await store().get('abcdefghijklmnopqrstuv/0.png'))?.contentType).toBe('image/jpeg');
      await store().put('abcdefghijklmnopqrstuv/0.png', Buffer.from('png bytes'), 'image/png');
      expect(await store().get('abcdefghijklmnopqrstuv/0.png')).toEqual({
        data: Buffer.from('png bytes'),
        contentType: 'image/png',
      });
      await store().put('abcdefghijklmnopqrstuv/note', Buffer.from('{}'), 'application/json');
      expect((await store().get('abcdefghijklmnopqrstuv/note'))?.contentType).toBe('application/json');
    });

    it('answers null for a key it does not hold', async () => {
      expect(await store().get('Q2hhbmdlTWVQbGVhc2UxMg/missing.png')).toBeNull();
    });

    it('deletes a blob, and deleting it again is not an error', async () => {
      await store().put('abcdefghijklmnopqrstuv/0.png', Buffer.from('x'), 'image/png');
      await store().delete('abcdefghijklmnopqrstuv/0.png');
      await store().delete('abcdefghijklmnopqrstuv/0.png');
      expect(await store().get('abcdefghijklmnopqrstuv/0.png')).toBeNull();
    });

    it.each(['../escape.png', 'a/../../b.png', '/etc/passwd', 'a\\b.png', 'a//b.png', '.hidden/x', ''])(
      'refuses the key %j, which could leave its directory',
      async (key) => {
        expect(isValidBlobKey(key)).toBe(false);
        await expect(store().put(key, Buffer.from('x'), 'image/png')).rejects.toThrow('is not valid');
        expect(await store().get(key)).toBeNull();
      },
    );
  });
}
