import { readFile } from 'node:fs/promises';
import { serveChild } from '@imagegen/engines/threads';
import sharp from 'sharp';
import type { DecodeCheckRequest } from './decode-check.ts';
import { countJpegScans, MAX_JPEG_SCANS } from './jpeg-scans.ts';

/**
 * A decode process (decode-check.ts): decodes one image whole per request. One libvips thread and
 * no operation cache: it does one thing at a time and keeps nothing.
 */
sharp.cache(false);
sharp.concurrency(1);

serveChild<DecodeCheckRequest, true>(async ({ source, format, maxPixels }) => {
  const data =
    typeof source === 'string'
      ? await readFile(source)
      : Buffer.from(source.buffer, source.byteOffset, source.byteLength);
  if (format === 'jpeg' && countJpegScans(data) > MAX_JPEG_SCANS) {
    throw new Error(`the JPEG has more than ${MAX_JPEG_SCANS} scans, which no camera or encoder writes`);
  }
  try {
    // stats() reads every pixel without holding the image: a full decode in bounded memory.
    await sharp(data, { failOn: 'truncated', limitInputPixels: maxPixels }).stats();
  } catch {
    throw new Error('the image data is truncated or corrupt');
  }
  return true as const;
});
