import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { EngineInputError } from '../src/engine.ts';
import {
  compositeOnBackground,
  inpaintMaskFromCoords,
  outpaintCanvas,
  tilePlan,
} from '../src/image-ops/index.ts';
import { iou, photoCrop } from './support/fixtures.ts';

async function gray(png: Buffer): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(png).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

describe('outpainting canvas', () => {
  it('extends the chosen sides by their expansion and masks exactly the new area', async () => {
    const image = await sharp(await photoCrop())
      .resize(100, 80)
      .png()
      .toBuffer();
    const out = await outpaintCanvas(image, { direction: ['left', 'down'], expansion: [30, 20] });
    expect(out).toMatchObject({
      width: 130,
      height: 100,
      original: { left: 30, top: 0, width: 100, height: 80 },
    });
    const mask = await gray(out.mask);
    const at = (x: number, y: number) => mask.data[y * mask.width + x];
    expect(at(5, 40)).toBe(255);
    expect(at(80, 95)).toBe(255);
    expect(at(30, 0)).toBe(0);
    expect(at(129, 79)).toBe(0);
    // The original's pixels are untouched on the canvas.
    const back = await sharp(out.canvas)
      .extract({ left: 30, top: 0, width: 100, height: 80 })
      .raw()
      .toBuffer();
    expect(Buffer.compare(back, await sharp(image).raw().toBuffer())).toBe(0);
  });

  it('reaches back into the original by the overlap on extended sides only', async () => {
    const image = await sharp(await photoCrop())
      .resize(100, 100)
      .png()
      .toBuffer();
    const out = await outpaintCanvas(image, { direction: ['right'], expansion: [64], overlap: 0.05 });
    const mask = await gray(out.mask);
    expect(mask.data[50 * 164 + 96]).toBe(255);
    expect(mask.data[50 * 164 + 94]).toBe(0);
    expect(mask.data[0 * 164 + 0]).toBe(0);
  });

  it('applies one expansion to every direction', async () => {
    const image = await sharp(await photoCrop())
      .resize(50, 40)
      .png()
      .toBuffer();
    const out = await outpaintCanvas(image, { direction: ['left', 'right', 'up', 'down'], expansion: [10] });
    expect([out.width, out.height]).toEqual([70, 60]);
  });

  it('rejects an expansion list that matches neither one value nor the directions', async () => {
    const image = await sharp(await photoCrop())
      .resize(50, 40)
      .png()
      .toBuffer();
    await expect(
      outpaintCanvas(image, { direction: ['left', 'right'], expansion: [10, 20, 30] }),
    ).rejects.toThrow(EngineInputError);
  });

  it('plans overlapping tiles that cover a canvas larger than the resolution', () => {
    const tiles = tilePlan(1500, 900, 2, 1, 1024);
    expect(tiles).toHaveLength(2);
    expect(tiles.every((t) => t.width <= 1024 && t.height === 900)).toBe(true);
    expect(tiles[0]!.left).toBe(0);
    expect(tiles[1]!.left + tiles[1]!.width).toBe(1500);
    expect(tiles[1]!.left).toBeLessThan(tiles[0]!.width);
  });
});

describe('inpaint-anything mask', () => {
  const disc = (fill: string) =>
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200"><rect width="300" height="200" fill="${fill === '#fff' ? '#000' : '#3a6fb0'}"/><circle cx="90" cy="100" r="50" fill="${fill}"/><rect x="190" y="60" width="70" height="80" fill="${fill === '#fff' ? '#000' : '#2f9e44'}"/></svg>`,
    );

  it('selects the object under the point and nothing else', async () => {
    const scene = await sharp(disc('#e03131')).png().toBuffer();
    const truth = await sharp(disc('#fff')).extractChannel(0).raw().toBuffer();
    const out = await inpaintMaskFromCoords(scene, [90, 100], { dilate: 0 });
    const mask = await gray(out.mask);
    expect(iou(mask.data, truth)).toBeGreaterThanOrEqual(0.9);
    expect(mask.data[100 * 300 + 220]).toBe(0);
  });

  it('joins the objects of several points and grows the mask by the dilation', async () => {
    const scene = await sharp(disc('#e03131')).png().toBuffer();
    const tight = await inpaintMaskFromCoords(scene, [90, 100, 220, 100], { dilate: 0 });
    const grown = await inpaintMaskFromCoords(scene, [90, 100, 220, 100], { dilate: 10 });
    expect(grown.area).toBeGreaterThan(tight.area);
    const mask = await gray(tight.mask);
    expect(mask.data[100 * 300 + 220]).toBe(255);
    expect(mask.data[100 * 300 + 90]).toBe(255);
    expect(mask.data[10 * 300 + 10]).toBe(0);
  });

  it('rejects a point outside the image and an odd number of coordinates', async () => {
    const scene = await sharp(disc('#e03131')).png().toBuffer();
    await expect(inpaintMaskFromCoords(scene, [400, 10])).rejects.toThrow(
      'input_coords point (400, 10) lies outside the 300 x 200 image',
    );
    await expect(inpaintMaskFromCoords(scene, [10])).rejects.toThrow(EngineInputError);
  });
});

describe('background compositing', () => {
  it('lays the subject over the style image, scaled to cover its frame', async () => {
    const subject = await sharp({
      create: { width: 120, height: 80, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
    })
      .composite([
        {
          input: Buffer.from(
            '<svg width="120" height="80"><rect x="40" y="20" width="40" height="40" fill="#ff0000"/></svg>',
          ),
        },
      ])
      .png()
      .toBuffer();
    const background = await sharp({
      create: { width: 300, height: 300, channels: 3, background: '#00ff00' },
    })
      .png()
      .toBuffer();
    const out = await compositeOnBackground(subject, background);
    expect([out.width, out.height]).toEqual([120, 80]);
    const { data, info } = await sharp(out.image).raw().toBuffer({ resolveWithObject: true });
    expect(info.channels).toBe(3);
    const px = (x: number, y: number) => [...data.subarray((y * 120 + x) * 3, (y * 120 + x) * 3 + 3)];
    expect(px(60, 40)).toEqual([255, 0, 0]);
    expect(px(5, 5)).toEqual([0, 255, 0]);
    const mask = await gray(out.mask);
    expect(mask.data[40 * 120 + 60]).toBe(255);
    expect(mask.data[5 * 120 + 5]).toBe(0);
  });
});
