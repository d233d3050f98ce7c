import { EngineInputError } from '@imagegen/engines';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { createCpuEngine, modelScaleFor, SUPERRESOLUTION_MODEL_MAP } from '../src/engine-api.ts';
import { context, inputImage, job, photoCrop, psnr } from './support/fixtures.ts';

const engine = createCpuEngine({ preload: [] });
afterAll(() => engine.close?.());

async function superresolution(input: Record<string, unknown>, image: Buffer) {
  return engine.run(
    job(
      '/superresolution/v1',
      { init_image: 'https://images.example/a.png', tile: 128, ...input },
      { init_image: await inputImage(image) },
    ),
    context(),
  );
}

describe('superresolution', () => {
  it('upscales x4 to the right size and beats bicubic resizing on PSNR against the original', async () => {
    const original = await photoCrop();
    const small = await sharp(original).resize(38, 38, { kernel: 'cubic' }).png().toBuffer();
    const ctx = context();
    const result = await engine.run(
      job(
        '/superresolution/v1',
        { model_name: 'realesr-general-x4v3', scale_factor: 4, tile: 128 },
        { init_image: await inputImage(small) },
      ),
      ctx,
    );
    const [output] = result.images;
    expect(output).toMatchObject({ contentType: 'image/png', width: 152, height: 152 });
    expect(result.meta?.model).toBe('@upscalerjs/esrgan-slim');
    const bicubic = await sharp(small).resize(152, 152, { kernel: 'cubic' }).png().toBuffer();
    const esrgan = await psnr(output!.data, original);
    const baseline = await psnr(bicubic, original);
    expect(esrgan).toBeGreaterThan(baseline);
    expect(ctx.fractions.at(-1)).toBe(1);
  });

  it('stitches patches of the requested tile size without changing the result size', async () => {
    const image = await sharp(await photoCrop())
      .resize(150, 90)
      .png()
      .toBuffer();
    const result = await superresolution({ model_name: 'realesr-general-x4v3', scale_factor: 2.5 }, image);
    expect(result.images[0]).toMatchObject({ width: 375, height: 225 });
    expect(result.meta).toMatchObject({ native_scale: 3, tile: 128 });
    // No band is left black where a patch was missed.
    const { data, info } = await sharp(result.images[0]!.data).raw().toBuffer({ resolveWithObject: true });
    let darkRows = 0;
    for (let y = 0; y < info.height; y++) {
      let sum = 0;
      for (let x = 0; x < info.width * info.channels; x++) sum += data[y * info.width * info.channels + x]!;
      if (sum === 0) darkRows++;
    }
    expect(darkRows).toBe(0);
  });

  it('maps every superresolution model_name to a shipped ESRGAN model', () => {
    expect(Object.keys(SUPERRESOLUTION_MODEL_MAP).sort()).toEqual([
      'RealESRGAN_x2plus',
      'RealESRGAN_x4plus',
      'realesr-general-x4v3',
    ]);
    expect(modelScaleFor(1.5)).toBe(2);
    expect(modelScaleFor(3)).toBe(3);
    expect(modelScaleFor(3.5)).toBe(4);
  });

  it('fails face_enhance with a clear error instead of ignoring it', async () => {
    const image = await photoCrop();
    await expect(
      superresolution({ model_name: 'RealESRGAN_x4plus', scale_factor: 2, face_enhance: true }, image),
    ).rejects.toThrow(EngineInputError);
    await expect(
      superresolution({ model_name: 'RealESRGAN_x4plus', scale_factor: 2, face_enhance: true }, image),
    ).rejects.toThrow(/face_enhance needs a face-restoration model/);
  });

  it('fails an uploaded model hash with a clear error', async () => {
    await expect(
      superresolution({ model_name: 'a1b2c3d4e5', scale_factor: 2 }, await photoCrop()),
    ).rejects.toThrow(/model_name a1b2c3d4e5 is not available on the cpu engine/);
  });
});

describe('upscaler', () => {
  it('deblurs and enlarges x2 with the medium ESRGAN', async () => {
    const image = await sharp(await photoCrop())
      .resize(64, 48)
      .png()
      .toBuffer();
    const result = await engine.run(
      job(
        '/upscaler/v1',
        { input_image: 'https://images.example/a.png', prompt: 'sharp', type: 'deblur' },
        { input_image: await inputImage(image) },
      ),
      context(),
    );
    expect(result.images[0]).toMatchObject({ width: 128, height: 96 });
    expect(result.meta?.model).toBe('@upscalerjs/esrgan-medium');
  });

  it('fails type variation with a clear error instead of ignoring it', async () => {
    const image = await photoCrop();
    await expect(
      engine.run(
        job(
          '/upscaler/v1',
          { input_image: 'https://images.example/a.png', prompt: 'x', type: 'variation' },
          { input_image: await inputImage(image) },
        ),
        context(),
      ),
    ).rejects.toThrow(/type variation re-imagines the image with a diffusion model/);
  });
});
