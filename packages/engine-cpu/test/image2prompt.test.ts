import { afterAll, describe, expect, it } from 'vitest';
import { createCpuEngine } from '../src/engine-api.ts';
import { context, facePhoto, inputImage, job, landscape } from './support/fixtures.ts';

const engine = createCpuEngine({ preload: [] });
afterAll(() => engine.close?.());

async function describeImage(image: Buffer) {
  return engine.run(
    job(
      '/image2prompt/v1',
      { input_image: 'https://images.example/a.png' },
      { input_image: await inputImage(image) },
    ),
    context(),
  );
}

describe('image2prompt on the cpu engine', () => {
  it('describes a photo of a man with tags from the detected person, his face with an age, and the colours', async () => {
    const result = await describeImage(await facePhoto());
    expect(result.images).toEqual([]);
    const tags = result.text!.split(', ');
    expect(tags[0]).toBe('photo');
    expect(tags).toContain('person');
    expect(tags.some((t) => /^(man|woman|person) about \d+ years old$/.test(t))).toBe(true);
    expect(tags.some((t) => t.endsWith(' tones'))).toBe(true);
    expect(tags.at(-1)).toBe('landscape orientation');
    expect(result.meta?.faces).toBe(1);
  });

  it('names no person in a landscape and reports its blue and green tones', async () => {
    const result = await describeImage(await landscape());
    const text = result.text!;
    expect(text).not.toMatch(/person|man|woman/);
    expect(text).toMatch(/blue/);
    expect(text).toMatch(/green/);
    expect(result.meta?.faces).toBe(0);
  });
});
