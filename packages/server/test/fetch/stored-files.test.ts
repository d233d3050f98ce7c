import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sampleImageUrl } from '@imagegen/contract';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImageFetcher, InputFetchError } from '../../src/fetch/image-fetcher.ts';
import { withStoredFiles } from '../../src/fetch/stored-files.ts';
import { allocateOutputKeys, downloadUrl } from '../../src/storage/blob-keys.ts';
import { LocalBlobStore } from '../../src/storage/local-blob-store.ts';
import { claimedSizePng } from '../support/test-images.ts';

/**
 * The API's own /files links as inputs, with the default fetcher (no private addresses): on one
 * machine those links point at loopback, which the guard refuses, so they must come from the store.
 */
let dir: string;
let store: LocalBlobStore;
let png: Buffer;
const PUBLIC_URL = 'http://localhost:8000';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-stored-files-'));
  store = new LocalBlobStore(dir);
  png = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#3366aa' } })
    .png()
    .toBuffer();
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function stored(data: Buffer, contentType = 'image/png'): Promise<string> {
  const [key] = allocateOutputKeys(1, 'upload');
  await store.put(key!, data, contentType);
  return key!;
}

async function failure(promise: Promise<unknown>): Promise<InputFetchError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InputFetchError);
  return error as InputFetchError;
}

describe('withStoredFiles', () => {
  const ours = () => withStoredFiles(createImageFetcher(), store, PUBLIC_URL);

  it('reads our own links from the store, though they point at loopback', async () => {
    const link = downloadUrl(PUBLIC_URL, await stored(png));
    const image = await ours().fetchImage(link, 'init_image');
    expect((await image.read()).equals(png)).toBe(true);
    expect(image).toMatchObject({ contentType: 'image/png', width: 30, height: 20, url: link });
    // With a query, as the /files route ignores it.
    expect((await ours().fetchImage(`${link}?download=1`, 'init_image')).width).toBe(30);
  });

  it('leaves every other URL to the guarded fetcher, which still refuses loopback', async () => {
    const key = await stored(png);
    for (const url of [`http://127.0.0.1:8000/files/${key}`, `http://localhost:8001/files/${key}`]) {
      const error = await failure(ours().fetchImage(url, 'init_image'));
      expect(error.message).toMatch(/^init_image: .*not public/);
    }
  });

  it('answers a missing file, a non-image and a bad key with an error naming the field', async () => {
    const missing = await failure(
      ours().fetchImage(`${PUBLIC_URL}/files/AAAAAAAAAAAAAAAAAAAAAA/upload0.png`, 'init_images[1]'),
    );
    expect(missing.message).toBe('init_images[1]: no file is stored at this link (HTTP 404)');

    const text = downloadUrl(PUBLIC_URL, await stored(Buffer.from('not an image at all'), 'text/plain'));
    const notImage = await failure(ours().fetchImage(text, 'mask_image'));
    expect(notImage.message).toMatch(/^mask_image: content is not a PNG, JPEG, WebP or GIF image/);

    // A link to the folder of an upload (`/files/<folder>`) names no file either.
    const folder = (await stored(png)).split('/')[0]!;
    const directory = await failure(ours().fetchImage(`${PUBLIC_URL}/files/${folder}`, 'init_image'));
    expect(directory.message).toBe('init_image: no file is stored at this link (HTTP 404)');

    const traversal = await failure(
      ours().fetchImage(`${PUBLIC_URL}/files/..%2F..%2Fetc%2Fpasswd`, 'init_image'),
    );
    expect(traversal.message).toBe('init_image: no file is stored at this link (HTTP 404)');
  });

  it("holds a stored file to the header's limits, and does not decode it again", async () => {
    const thin = downloadUrl(PUBLIC_URL, await stored(claimedSizePng(1, 49_999_999)));
    expect((await failure(ours().fetchImage(thin, 'init_image'))).message).toBe(
      'init_image: image is 1×49999999; each side may be at most 16384 pixels',
    );
    // Every stored file was decoded whole when it was stored (an upload) or made by an engine:
    // reading it as an input costs its header alone, so even a file cut short since is not decoded.
    const truncated = downloadUrl(PUBLIC_URL, await stored(png.subarray(0, png.length - 20)));
    expect(await ours().fetchImage(truncated, 'init_image')).toMatchObject({ width: 30, height: 20 });
  });

  it('reads the sample images of the API though the store holds none', async () => {
    const link = sampleImageUrl(PUBLIC_URL, 'portrait');
    const image = await ours().fetchImage(link, 'input_face');
    expect(image).toMatchObject({ contentType: 'image/jpeg', width: 424, height: 312, url: link });
    const mask = await ours().fetchImage(sampleImageUrl(PUBLIC_URL, 'mask'), 'mask_image');
    expect(mask).toMatchObject({ contentType: 'image/png', width: 512, height: 512 });
    const unknown = await failure(ours().fetchImage(`${PUBLIC_URL}/files/samples/secrets.png`, 'init_image'));
    expect(unknown.message).toBe('init_image: no file is stored at this link (HTTP 404)');
  });

  it('matches links under a public URL with a path', async () => {
    const base = 'https://api.example.com/imagegen/';
    const key = await stored(png);
    const image = await withStoredFiles(createImageFetcher(), store, base).fetchImage(
      downloadUrl(base, key),
      'init_image',
    );
    expect(image.width).toBe(30);
  });
});
