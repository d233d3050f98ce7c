import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp, { type Sharp } from 'sharp';
import { describe, expect, it } from 'vitest';
import { stripMetadata } from '../../src/storage/strip-metadata.ts';

/**
 * Outputs handed out without embedded metadata, on real files: a PNG a real ComfyUI 0.3.64 saved
 * (its graph in a text chunk), and PNG, JPEG (baseline and progressive) and WebP files libvips
 * wrote with EXIF, XMP and an ICC profile. The pictures must come out pixel for pixel, the colour
 * profile kept, everything else gone.
 */

/** The recordings of a real ComfyUI, kept with the fake. */
const captures = fileURLToPath(new URL('../../../comfyui-fake/comfyui-captures/', import.meta.url));

/** PNG chunk types in order. */
function pngChunks(data: Buffer): string[] {
  const types: string[] = [];
  for (let at = 8; at + 12 <= data.length; at += 12 + data.readUInt32BE(at)) {
    types.push(data.toString('latin1', at + 4, at + 8));
  }
  return types;
}

async function pixels(data: Buffer): Promise<Buffer> {
  return sharp(data).raw().toBuffer();
}

/** A 64 x 48 photo-like picture, for the encoders to write. */
async function picture(): Promise<Sharp> {
  const raw = Buffer.alloc(64 * 48 * 3);
  for (let n = 0; n < raw.length; n++) raw[n] = (n * 7 + (n >> 6) * 13) % 256;
  return sharp(raw, { raw: { width: 64, height: 48, channels: 3 } });
}

const EXIF = { IFD0: { Copyright: 'operator secret', ImageDescription: 'juggernautXL_v9.safetensors' } };
const XMP =
  '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator>hidden style prompt</dc:creator></rdf:Description></rdf:RDF></x:xmpmeta>';

async function tagged(encode: (image: Sharp) => Sharp): Promise<Buffer> {
  return encode((await picture()).withIccProfile('p3').withExif(EXIF).withXmp(XMP)).toBuffer();
}

describe('output images without embedded metadata', () => {
  it("drops a real ComfyUI PNG's graph, keeping every pixel", async () => {
    const saved = await readFile(path.join(captures, 'txt2img-03-get-view-output.response.png'));
    expect(pngChunks(saved)).toEqual(['IHDR', 'tEXt', 'IDAT', 'IEND']);
    expect(saved.toString('latin1')).toContain('random-sd15.safetensors');
    const clean = stripMetadata(saved, 'image/png');
    expect(pngChunks(clean)).toEqual(['IHDR', 'IDAT', 'IEND']);
    expect(clean.toString('latin1')).not.toContain('safetensors');
    expect(await pixels(clean)).toEqual(await pixels(saved));
    // Only the chunk went: the rest is the same bytes.
    expect(saved.length - clean.length).toBe(12 + 804);
  });

  it('drops text, EXIF and XMP from a PNG, and keeps its colour profile', async () => {
    const written = await tagged((image) => image.png());
    expect((await sharp(written).metadata()).exif).toBeDefined();
    const clean = stripMetadata(written, 'image/png');
    const after = await sharp(clean).metadata();
    expect(after.exif).toBeUndefined();
    expect(after.xmp).toBeUndefined();
    expect(after.icc).toBeDefined();
    expect(
      pngChunks(clean).filter((type) => ['tEXt', 'zTXt', 'iTXt', 'eXIf', 'tIME'].includes(type)),
    ).toEqual([]);
    expect(clean.toString('latin1')).not.toMatch(/operator secret|hidden style prompt|juggernaut/);
    expect(await pixels(clean)).toEqual(await pixels(written));
  });

  it.each([
    ['baseline', (image: Sharp) => image.jpeg({ quality: 90 })],
    ['progressive', (image: Sharp) => image.jpeg({ quality: 90, progressive: true })],
  ])('drops EXIF, XMP and comments from a %s JPEG, and keeps its colour profile', async (_kind, encode) => {
    const written = await tagged(encode);
    const before = await sharp(written).metadata();
    expect(before.exif).toBeDefined();
    expect(before.xmp).toBeDefined();
    // A comment after the start of image, as some encoders write one.
    const comment = Buffer.from('operator secret comment');
    const com = Buffer.concat([Buffer.from([0xff, 0xfe, 0, comment.length + 2]), comment]);
    const withComment = Buffer.concat([written.subarray(0, 2), com, written.subarray(2)]);
    const clean = stripMetadata(withComment, 'image/jpeg');
    const after = await sharp(clean).metadata();
    expect(after.exif).toBeUndefined();
    expect(after.xmp).toBeUndefined();
    expect(after.icc).toEqual(before.icc);
    expect(clean.toString('latin1')).not.toMatch(/operator secret|hidden style prompt|juggernaut/);
    expect(await pixels(clean)).toEqual(await pixels(written));
  });

  it('drops EXIF and XMP chunks from a WebP, clearing its header’s flags, and keeps its colour profile', async () => {
    const written = await tagged((image) => image.webp({ quality: 90 }));
    const clean = stripMetadata(written, 'image/webp');
    const after = await sharp(clean).metadata();
    expect(after.exif).toBeUndefined();
    expect(after.xmp).toBeUndefined();
    expect(after.icc).toBeDefined();
    expect(clean.toString('latin1')).not.toMatch(/operator secret|hidden style prompt|EXIF|XMP /);
    // VP8X flags: ICC (0x20) kept, EXIF (0x08) and XMP (0x04) cleared; the RIFF size fits the file.
    expect(clean[20]! & 0x2c).toBe(0x20);
    expect(clean.readUInt32LE(4)).toBe(clean.length - 8);
    expect(await pixels(clean)).toEqual(await pixels(written));
  });

  it('hands back a file with nothing to drop as it came, and one it cannot walk unchanged', async () => {
    const plain = await (await picture()).png().toBuffer();
    expect(stripMetadata(plain, 'image/png')).toBe(plain);
    const jpeg = await (await picture()).jpeg().toBuffer();
    expect(stripMetadata(jpeg, 'image/jpeg')).toBe(jpeg);
    const webp = await (await picture()).webp().toBuffer();
    expect(stripMetadata(webp, 'image/webp')).toBe(webp);
    const saved = await readFile(path.join(captures, 'txt2img-03-get-view-output.response.png'));
    const cut = saved.subarray(0, 200);
    expect(stripMetadata(cut, 'image/png')).toBe(cut);
    expect(stripMetadata(plain, 'image/jpeg')).toBe(plain);
  });
});
