import { readFile } from 'node:fs/promises';
import { buildOpenApi, SUPERRESOLUTION_MODELS } from '@imagegen/contract';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { NSFW_UNSAFE_RULE } from '../src/check-rules.ts';
import { createCpuEngine, facePreflight, isUnsafe } from '../src/engine-api.ts';
import { cpuEngineModule } from '../src/index.ts';
import { ESRGAN_NATIVE_SCALES, SUPERRESOLUTION_MODEL_MAP, UPSCALER_DEBLUR } from '../src/model-table.ts';
import { context, facePhoto, inputImage, job, landscape, photoCrop } from './support/fixtures.ts';

/**
 * The engine's notes (its catalogue's, which the OpenAPI descriptions and the docs append) quote
 * how it treats each request; these tests read the notes as published and hold the real engine to
 * them.
 */

const { notes } = await cpuEngineModule.catalogue();
const describedAs = (path: string) => notes?.pipelines?.[path] ?? '';
const safetyCheckerNote = notes?.fields?.safety_checker ?? '';

const engine = createCpuEngine({ preload: [] });
afterAll(() => engine.close?.());

async function smallPhoto(): Promise<Buffer> {
  return sharp(await photoCrop())
    .resize(32, 32)
    .png()
    .toBuffer();
}

describe('the notes against the tables the engine runs on', () => {
  it('map every superresolution model_name of the API reference, and nothing else, to a shipped ESRGAN model', () => {
    expect(Object.keys(SUPERRESOLUTION_MODEL_MAP).sort()).toEqual([...SUPERRESOLUTION_MODELS].sort());
    for (const choice of Object.values(SUPERRESOLUTION_MODEL_MAP)) {
      expect(choice.package).toBe(`@upscalerjs/esrgan-${choice.size}`);
    }
  });

  it('state the native scales, what fails on superresolution, and what image2prompt and bgremover answer', () => {
    const scales = ESRGAN_NATIVE_SCALES.map((scale) => `x${scale}`);
    expect(describedAs('/superresolution/v1')).toContain(
      `smallest native scale (${scales.slice(0, -1).join(', ')} or ${scales.at(-1)}) at or above \`scale_factor\``,
    );
    expect(describedAs('/superresolution/v1')).toContain('`face_enhance: true` fails the task');
    expect(describedAs('/superresolution/v1')).toContain('the hash of an uploaded model');
    expect(describedAs('/upscaler/v1')).toContain(
      `\`@upscalerjs/esrgan-${UPSCALER_DEBLUR.size}\` at native x${UPSCALER_DEBLUR.scale}`,
    );
    expect(describedAs('/upscaler/v1')).toContain(
      '`variation` needs a diffusion model: on the cpu engine it fails',
    );
    expect(describedAs('/image2prompt/v1')).toContain('a tag-style description, not a caption');
    for (const option of [
      'only_mask',
      'mask_background',
      'post_process_mask',
      'alpha_matting',
      'face_mask',
    ]) {
      expect(describedAs('/bgremover/v1'), option).toContain(`\`${option}\``);
    }
  });

  it('give the safety checker the very thresholds it classifies with', () => {
    expect(safetyCheckerNote).toContain(
      `Porn + Hentai ≥ ${NSFW_UNSAFE_RULE.explicit} or Sexy ≥ ${NSFW_UNSAFE_RULE.sexy}`,
    );
    expect(Object.keys(notes?.fields ?? {})).toEqual(['safety_checker']);
  });

  it('scope their field notes to schemas of the API reference that have those fields', () => {
    const schemas = buildOpenApi().components.schemas as Record<string, { properties?: object }>;
    const scoped = Object.entries(notes?.schemaFields ?? {});
    expect(scoped.map(([title]) => title).sort()).toEqual([
      'Image2PromptSuccessResponse',
      'SuperresolutionPrompt',
      'UpscalerPrompt',
    ]);
    for (const [title, fields] of scoped) {
      for (const field of Object.keys(fields))
        expect(schemas[title]?.properties, title).toHaveProperty(field);
    }
    expect(notes?.schemaFields?.SuperresolutionPrompt?.face_enhance).toContain('`true` fails the task');
    expect(notes?.schemaFields?.UpscalerPrompt?.type).toBe('On the cpu engine `variation` fails the task.');
  });
});

describe('the notes against the cpu engine', () => {
  it('runs every superresolution model_name on the ESRGAN package its note names', async () => {
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

  it('runs deblur on the ESRGAN package and native scale its note names', async () => {
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

  it('classifies with the very unsafe rule the safety_checker note states', () => {
    const [, explicit, sexy] =
      /Porn \+ Hentai ≥ (\d+(?:\.\d+)?) or Sexy ≥ (\d+(?:\.\d+)?)/.exec(safetyCheckerNote) ?? [];
    const [e, x] = [Number(explicit), Number(sexy)];
    expect(e).toBeGreaterThan(0);
    expect(x).toBeGreaterThan(0);
    // At each stated threshold the image is unsafe; just under it, safe.
    expect(isUnsafe({ Porn: e / 2, Hentai: e / 2, Neutral: 1 - e })).toBe(true);
    expect(isUnsafe({ Porn: e / 2 - 0.01, Hentai: e / 2, Neutral: 1 - e })).toBe(false);
    expect(isUnsafe({ Sexy: x, Neutral: 1 - x })).toBe(true);
    expect(isUnsafe({ Sexy: x - 0.01, Neutral: 1 - x })).toBe(false);
    expect(isUnsafe({ Drawing: 0.9, Neutral: 0.1 })).toBe(false);
  });

  it('checks for faces in exactly the fields the face pipelines’ notes name', async () => {
    const described = Object.entries(notes?.pipelines ?? {})
      .map(([path, text]) => {
        const note = /Every image in (.+?) must show a face/.exec(text);
        return [path, [...(note?.[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!)] as const;
      })
      .filter(([, fields]) => fields.length > 0);
    expect(described.length).toBeGreaterThan(0);
    expect([...facePreflight.pipelines].sort()).toEqual(described.map(([path]) => path).sort());
    const face = await inputImage(await facePhoto());
    const hills = await inputImage(await landscape());
    const signal = new AbortController().signal;
    for (const [path, fields] of described) {
      const images = (image: typeof face) => Object.fromEntries(fields.map((field) => [field, image]));
      await expect(facePreflight.check(job(path, {}, images(face)), signal), path).resolves.toBeUndefined();
      // Each described field is checked: a landscape in it alone fails the task, naming the field.
      for (const field of fields) {
        const checked = facePreflight.check(job(path, {}, { ...images(face), [field]: hills }), signal);
        await expect(checked, `${path} ${field}`).rejects.toThrow(field);
      }
    }
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
    expect(text).toContain(`Porn + Hentai is at least ${NSFW_UNSAFE_RULE.explicit}`);
    expect(text).toContain(`Sexy on its own is at least ${NSFW_UNSAFE_RULE.sexy}`);
  });
});
