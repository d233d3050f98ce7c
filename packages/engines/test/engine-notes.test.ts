import { readFile } from 'node:fs/promises';
import {
  buildOpenApi,
  FACE_CHECKED_FIELDS,
  NSFW_UNSAFE_RULE,
  SUPERRESOLUTION_MODEL_MAP,
} from '@imagegen/contract';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { createCpuEngine, FACE_FIELDS, facePreflight, UNSAFE_RULE } from '../src/cpu/index.ts';
import { context, inputImage, job, photoCrop } from './support/fixtures.ts';

/**
 * The OpenAPI descriptions quote how the cpu engine treats each request; these tests read the
 * published text and hold the real engine to it.
 */

const doc = buildOpenApi({ serverUrl: 'https://api.imagegen.dev' }) as unknown as {
  paths: Record<string, { post?: { description?: string } }>;
};
const describedAs = (path: string) => doc.paths[path]?.post?.description ?? '';

const engine = createCpuEngine({ preload: [] });
afterAll(() => engine.close?.());

async function smallPhoto(): Promise<Buffer> {
  return sharp(await photoCrop())
    .resize(32, 32)
    .png()
    .toBuffer();
}

describe('the OpenAPI descriptions against the cpu engine', () => {
  it('runs every superresolution model_name on the ESRGAN package its description names', async () => {
    const pairs = [...describedAs('/superresolution/v1').matchAll(/`([^`]+)` → `(@upscalerjs\/[^`]+)`/g)];
    expect(pairs.map(([, name]) => name).sort()).toEqual([
      'RealESRGAN_x2plus',
      'RealESRGAN_x4plus',
      'realesr-general-x4v3',
    ]);
    const image = await inputImage(await smallPhoto());
    const outputs = new Map<string, Buffer>();
    for (const [, modelName, described] of pairs) {
      const result = await engine.run(
        job(
          '/superresolution/v1',
          { init_image: 'https://images.example/a.png', model_name: modelName, scale_factor: 2, tile: 128 },
          { init_image: image },
        ),
        context(),
      );
      expect(result.meta?.model, modelName).toBe(described);
      expect(result.images[0], modelName).toMatchObject({ width: 64, height: 64 });
      // The same weights give the same pixels; other weights give other pixels.
      const pixels = await sharp(result.images[0]!.data).raw().toBuffer();
      for (const [other, otherPixels] of outputs) {
        expect(pixels.equals(otherPixels), `${described} vs ${other}`).toBe(other === described);
      }
      outputs.set(described!, pixels);
    }
  });

  it('runs deblur on the ESRGAN package and native scale its description names', async () => {
    const [, described, scale] =
      /`deblur` runs `(@upscalerjs\/[^`]+)` at native x(\d)/.exec(describedAs('/upscaler/v1')) ?? [];
    const result = await engine.run(
      job(
        '/upscaler/v1',
        { input_image: 'https://images.example/a.png', prompt: 'ignored', type: 'deblur' },
        { input_image: await inputImage(await smallPhoto()) },
      ),
      context(),
    );
    expect(result.meta).toMatchObject({ model: described, native_scale: Number(scale) });
    expect(result.images[0]).toMatchObject({ width: 32 * Number(scale), height: 32 * Number(scale) });
  });

  it('classifies with the very unsafe rule the safety_checker description states', () => {
    expect(UNSAFE_RULE).toEqual(NSFW_UNSAFE_RULE);
  });

  it('checks for faces in exactly the fields the face pipelines’ descriptions name', () => {
    expect(FACE_FIELDS).toEqual(FACE_CHECKED_FIELDS);
    expect([...facePreflight.pipelines].sort()).toEqual(Object.keys(FACE_CHECKED_FIELDS).sort());
  });
});

describe('the docs pages against the cpu engine', () => {
  const page = (name: string) => readFile(new URL(`../../docs/docs/${name}.mdx`, import.meta.url), 'utf8');

  it('name the same ESRGAN package for every superresolution model_name', async () => {
    const text = await page('Specialized Models/Superresolution');
    for (const [name, choice] of Object.entries(SUPERRESOLUTION_MODEL_MAP)) {
      const line = text.split('\n').find((l) => l.startsWith(`- \`${name}\``));
      expect(line, name).toContain(`\`${choice.package}\``);
    }
  });

  it('state the unsafe rule the safety checker applies', async () => {
    const text = await page('Parameters/NSFW-check');
    expect(text).toContain(`Porn + Hentai is at least ${UNSAFE_RULE.explicit}`);
    expect(text).toContain(`Sexy on its own is at least ${UNSAFE_RULE.sexy}`);
  });
});
