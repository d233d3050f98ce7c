import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { countJpegScans, MAX_JPEG_SCANS } from '../../src/fetch/jpeg-scans.ts';
import { manyScansJpeg, noiseImage } from '../support/test-images.ts';

describe('counting the scans of a JPEG', () => {
  it('counts one scan in a baseline JPEG and libjpeg’s ten in a progressive one', async () => {
    const png = await noiseImage(64, 48, 'png');
    expect(countJpegScans(await sharp(png).jpeg().toBuffer())).toBe(1);
    expect(countJpegScans(await sharp(png).jpeg({ progressive: true }).toBuffer())).toBe(10);
  });

  it('counts every repeated scan, and stops counting just past the limit', async () => {
    expect(countJpegScans(await manyScansJpeg(60))).toBe(60);
    expect(countJpegScans(await manyScansJpeg(5_000))).toBe(MAX_JPEG_SCANS + 1);
  });

  it('reads the stuffed 0xFF bytes of the entropy data as data, not as markers', async () => {
    // Noise at full quality: its entropy data holds many 0xFF 0x00 pairs.
    const jpeg = await sharp(await noiseImage(256, 256, 'png'))
      .jpeg({ quality: 100 })
      .toBuffer();
    expect(countJpegScans(jpeg)).toBe(1);
    expect(jpeg.includes(Buffer.from([0xff, 0x00]))).toBe(true);
  });

  it('stops at bytes that are not a JPEG’s segments, leaving them to the decoder', () => {
    expect(countJpegScans(Buffer.from([0xff, 0xd8, 0x00, 0x01, 0x02]))).toBe(0);
    expect(countJpegScans(Buffer.from([0xff, 0xd8, 0xff, 0xda]))).toBe(0);
  });
});
