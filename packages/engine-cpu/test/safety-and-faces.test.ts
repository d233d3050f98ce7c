import { EngineInputError } from '@imagegen/engines';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { createSafetyChecker, facePreflight, isUnsafe } from '../src/engine-api.ts';
import { facePhoto, inputImage, job, landscape } from './support/fixtures.ts';

const checker = createSafetyChecker();
afterAll(() => checker.close?.());
const signal = new AbortController().signal;

describe('safety checker', () => {
  it('classifies a neutral photo as safe, with Neutral its top class', async () => {
    const photo = await facePhoto();
    const verdict = await checker.classify(
      { data: photo, contentType: 'image/png', width: 424, height: 312 },
      signal,
    );
    expect(verdict.unsafe).toBe(false);
    const top = Object.entries(verdict.scores).sort((a, b) => b[1] - a[1])[0]![0];
    expect(top).toBe('Neutral');
    expect(Object.keys(verdict.scores).sort()).toEqual(['Drawing', 'Hentai', 'Neutral', 'Porn', 'Sexy']);
  });

  it('calls an image unsafe when the explicit classes pass the documented rule', () => {
    expect(isUnsafe({ Porn: 0.3, Hentai: 0.25, Neutral: 0.45 })).toBe(true);
    expect(isUnsafe({ Sexy: 0.85, Neutral: 0.15 })).toBe(true);
    expect(isUnsafe({ Sexy: 0.5, Porn: 0.2, Neutral: 0.3 })).toBe(false);
  });
});

describe('face preflight', () => {
  const url = 'https://images.example/face.png';

  it('passes a face swap whose inputs both show a face', async () => {
    const face = await inputImage(await facePhoto(), url);
    await expect(
      facePreflight.check(job('/faceswap/v1', {}, { input_face: face, input_image: face }), signal),
    ).resolves.toBeUndefined();
  });

  it('fails at once when input_face shows a landscape', async () => {
    const land = await inputImage(await landscape(), 'https://images.example/hills.png');
    const check = facePreflight.check(job('/instamodel/v1', {}, { input_face: land }), signal);
    await expect(check).rejects.toThrow(EngineInputError);
    await expect(
      facePreflight.check(job('/instamodel/v1', {}, { input_face: land }), signal),
    ).rejects.toThrow(
      'input_face shows no face (https://images.example/hills.png); /instamodel/v1 needs a photo with a clearly visible face',
    );
  });

  it('names the photomaker image without a face by its position', async () => {
    const face = await inputImage(await facePhoto(), url);
    const land = await inputImage(await landscape(), 'https://images.example/hills.png');
    await expect(
      facePreflight.check(job('/photomaker/v1', {}, { init_images: [face, land] }), signal),
    ).rejects.toThrow(/^init_images\[1\] shows no face/);
  });

  it('finds no face in a landscape even at a large size', async () => {
    const big = await sharp(await landscape())
      .resize(1600, 1000)
      .png()
      .toBuffer();
    await expect(
      facePreflight.check(
        job('/facelock/v1', {}, { input_face: await inputImage(big, 'https://images.example/big.png') }),
        signal,
      ),
    ).rejects.toThrow(/input_face shows no face/);
  });

  it('covers every face pipeline of the contract', () => {
    expect([...facePreflight.pipelines].sort()).toEqual([
      '/facelock/v1',
      '/facelock/v2',
      '/faceswap/v1',
      '/instamodel/v1',
      '/photomaker/v1',
    ]);
  });
});
