import type { EngineResult } from '@imagegen/engines';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuEngine } from '../src/engine-api.ts';
import { channel, context, facePhoto, inputImage, iou, job, productScene } from './support/fixtures.ts';

// No preload: the first removal loads ISNet, and is its one slower first run.
const engine = createCpuEngine({ preload: [] });
let scene: { scene: Buffer; mask: Buffer };
let plain: EngineResult;

beforeAll(async () => {
  await engine.start?.();
  scene = await productScene();
  plain = await remove({});
});
afterAll(() => engine.close?.());

async function remove(options: Record<string, boolean>, image = scene.scene) {
  return engine.run(
    job(
      '/bgremover/v1',
      { init_image: 'https://images.example/a.png', ...options },
      { init_image: await inputImage(image) },
    ),
    context(),
  );
}

describe('background removal', () => {
  it('cuts out the object of a synthetic scene with an alpha matching its true mask', async () => {
    const [output] = plain.images;
    expect(output).toMatchObject({ contentType: 'image/png', width: 512, height: 512 });
    const meta = await sharp(output!.data).metadata();
    expect(meta.channels).toBe(4);
    expect(iou(await channel(output!, 3), scene.mask)).toBeGreaterThanOrEqual(0.9);
  });

  it('answers the mask alone, inverted to keep the background, when only_mask and mask_background are set', async () => {
    const [output] = (await remove({ only_mask: true, mask_background: true })).images;
    const meta = await sharp(output!.data).metadata();
    expect(meta.channels).toBe(1);
    const inverse = Buffer.from(scene.mask.map((v) => 255 - v));
    expect(iou(await channel(output!, 0), inverse)).toBeGreaterThanOrEqual(0.9);
  });

  it('post-processes the mask into clean binary edges', async () => {
    const [output] = (await remove({ only_mask: true, post_process_mask: true })).images;
    const mask = await channel(output!, 0);
    const soft = mask.filter((v) => v > 0 && v < 255).length;
    expect(soft).toBe(0);
    expect(iou(mask, scene.mask)).toBeGreaterThanOrEqual(0.9);
  });

  it('refines the edges with alpha matting and keeps the sure regions', async () => {
    const alpha = await channel(plain.images[0]!, 3);
    const matted = await channel((await remove({ only_mask: true, alpha_matting: true })).images[0]!, 0);
    expect(iou(matted, scene.mask)).toBeGreaterThanOrEqual(0.9);
    // The centre of the object stays opaque and a far corner transparent.
    expect(matted[280 * 512 + 256]).toBe(255);
    expect(matted[5 * 512 + 5]).toBe(0);
    expect(Buffer.compare(alpha, matted)).not.toBe(0);
  });

  it('keeps a detected face wholly in the subject when face_mask is set', async () => {
    const photo = await facePhoto();
    const result = await remove({ only_mask: true, face_mask: true }, photo);
    expect(result.meta?.faces).toBeGreaterThanOrEqual(1);
    const mask = await channel(result.images[0]!, 0);
    // The man's face in the 424 x 312 photo lies around (225, 75).
    expect(mask[75 * 424 + 225]).toBe(255);
  });
});
