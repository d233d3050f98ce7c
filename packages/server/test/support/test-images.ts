import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';

/** Real encoded images for tests: noise, so that compression cannot make them trivial. */
export async function noiseImage(width: number, height: number, format: 'png' | 'jpeg'): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  let state = 12345;
  for (let i = 0; i < pixels.length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    pixels[i] = state >>> 24;
  }
  const image = sharp(pixels, { raw: { width, height, channels: 3 } });
  return format === 'png' ? image.png().toBuffer() : image.jpeg().toBuffer();
}

/**
 * A PNG of random pixels stored without compression: its size is width × height × 3 bytes and a
 * little more (2550 × 2550: 19.5 MB, just under the 20 MB an input may have).
 */
export async function incompressiblePng(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

/**
 * A tiny, valid-looking PNG whose header claims width × height: what a decompression bomb looks
 * like before anyone decodes it.
 */
export function claimedSizePng(width: number, height: number): Buffer {
  return rgbPng(width, height, deflateSync(Buffer.alloc(1024)));
}

/**
 * A whole PNG of width × height black pixels, every row written (sharp refuses to make shapes such
 * as 1 × 49,999,999): a picture of a few hundred kilobytes that takes a decoder minutes.
 */
export function blackPng(width: number, height: number): Buffer {
  // Every row is a filter byte and black pixels: zeros, which deflate about 1,000 to 1.
  return rgbPng(width, height, deflateSync(Buffer.alloc((1 + width * 3) * height), { level: 9 }));
}

/** An 8-bit RGB PNG of the given size around already deflated pixel rows. */
function rgbPng(width: number, height: number, idat: Buffer): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, default compression, filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/**
 * A progressive JPEG whose last scan is repeated until it has `scans` scans: what a JPEG built to
 * be decoded hundreds of thousands of times over looks like, at a few kilobytes.
 */
export async function manyScansJpeg(scans: number): Promise<Buffer> {
  const jpeg = await sharp(await noiseImage(64, 64, 'png'))
    .jpeg({ progressive: true })
    .toBuffer();
  const lastScan = jpeg.lastIndexOf(Buffer.from([0xff, 0xda]));
  const end = jpeg.length - 2; // EOI
  const scan = jpeg.subarray(lastScan, end);
  const own = countScans(jpeg);
  return Buffer.concat([
    jpeg.subarray(0, end),
    ...Array.from({ length: Math.max(0, scans - own) }, () => scan),
    jpeg.subarray(end),
  ]);
}

/** The SOS markers of a JPEG as libjpeg writes it (no 0xFF 0xDA inside its entropy data). */
function countScans(jpeg: Buffer): number {
  let count = 0;
  for (
    let at = jpeg.indexOf(Buffer.from([0xff, 0xda]));
    at >= 0;
    at = jpeg.indexOf(Buffer.from([0xff, 0xda]), at + 2)
  )
    count++;
  return count;
}
