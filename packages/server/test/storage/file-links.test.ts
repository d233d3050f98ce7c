import { describe, expect, it } from 'vitest';
import { fileKeysLinkedFrom } from '../../src/storage/blob-keys.ts';

/** The stored files a task's input names: what the retention sweeper keeps while the task is live. */
describe('fileKeysLinkedFrom', () => {
  const PUBLIC_URL = 'https://api.example.com/base';

  it('finds every link to a stored file, at any depth, once each', () => {
    const input = {
      prompt: 'see https://api.example.com/base/files/aaaaaaaaaaaaaaaaaaaaaa/0.png for the style',
      init_image: 'https://api.example.com/base/files/bbbbbbbbbbbbbbbbbbbbbb/upload0.png?download=1',
      image_urls: ['https://api.example.com/base/files/bbbbbbbbbbbbbbbbbbbbbb/upload0.png'],
      controlnets: [{ image: 'http://10.0.0.7:8000/files/cccccccccccccccccccccc/1.webp' }],
      seed: 7,
      mask_image: null,
      other: 'https://elsewhere.example.com/image.png',
    };
    expect(fileKeysLinkedFrom(input, PUBLIC_URL).sort()).toEqual([
      'aaaaaaaaaaaaaaaaaaaaaa/0.png',
      'bbbbbbbbbbbbbbbbbbbbbb/upload0.png',
      'cccccccccccccccccccccc/1.webp',
    ]);
  });

  it('reads an own link as the worker will, escapes decoded, and never answers a key no file can have', () => {
    expect(
      fileKeysLinkedFrom({ init_image: `${PUBLIC_URL}/files/%64dddddddddddddddddddd/0.png` }, PUBLIC_URL),
    ).toEqual([`${'d'.repeat(21)}/0.png`]);
    expect(fileKeysLinkedFrom({ init_image: `${PUBLIC_URL}/files/a%00b/0.png` }, PUBLIC_URL)).toEqual([]);
    expect(fileKeysLinkedFrom({ prompt: 'no links here', n: [1, 2, 3] }, PUBLIC_URL)).toEqual([]);
  });
});
