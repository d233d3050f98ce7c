/**
 * Output images without what they carry besides the picture: ComfyUI writes its whole graph into
 * every PNG (`prompt` and `workflow` text chunks: the operator's checkpoint file names, node packs
 * and hidden style prompts), and other encoders write EXIF, XMP or comments. The worker hands out
 * every engine's outputs through here. Each format is walked chunk by chunk, never decoded: the
 * chunks that draw the picture (and its colour profile) are kept byte for byte, the others are
 * left out, so the pixels are exactly the engine's and the cost is one pass over the bytes. A file
 * with nothing to drop is returned as it came (no copy); one that is not what its type says, or
 * breaks off, is returned unchanged too: the decode that would catch it is not this module's.
 */

export type ImageType = 'image/png' | 'image/jpeg' | 'image/webp';

export function stripMetadata(data: Buffer, contentType: ImageType): Buffer {
  switch (contentType) {
    case 'image/png':
      return stripPng(data);
    case 'image/jpeg':
      return stripJpeg(data);
    case 'image/webp':
      return stripWebp(data);
  }
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The PNG chunks kept: the critical ones (upper-case first letter) and the ancillary ones that
 * change how the picture looks (transparency, colour space and profile, gamma, significant bits,
 * background, pixel size, HDR) or move (APNG). Text (tEXt, zTXt, iTXt), EXIF (eXIf), time (tIME)
 * and every private chunk go.
 */
const PNG_KEPT = new Set([
  'tRNS',
  'gAMA',
  'cHRM',
  'sRGB',
  'iCCP',
  'cICP',
  'mDCv',
  'cLLI',
  'sBIT',
  'bKGD',
  'pHYs',
  'acTL',
  'fcTL',
  'fdAT',
]);

function stripPng(data: Buffer): Buffer {
  if (data.length < 8 || !data.subarray(0, 8).equals(PNG_SIGNATURE)) return data;
  const kept: Buffer[] = [data.subarray(0, 8)];
  let dropped = false;
  let at = 8;
  while (at + 12 <= data.length) {
    const length = data.readUInt32BE(at);
    const end = at + 12 + length;
    if (end > data.length) return data;
    const type = data.toString('latin1', at + 4, at + 8);
    const critical = (data[at + 4]! & 0x20) === 0;
    if (critical || PNG_KEPT.has(type)) kept.push(data.subarray(at, end));
    else dropped = true;
    at = end;
    if (type === 'IEND') break;
  }
  // Bytes after IEND are no part of the picture either.
  if (at < data.length) dropped = true;
  return dropped ? Buffer.concat(kept) : data;
}

/**
 * The JPEG segments kept: APP0 (JFIF), APP2 holding an ICC profile, APP14 (Adobe: how the colour
 * channels are stored), and every segment the decoder reads (frame, tables, scans). Gone: APP1
 * (EXIF, XMP), APP13 (IPTC), the other APPn, comments, and anything after the image's end.
 */
function stripJpeg(data: Buffer): Buffer {
  if (data.length < 4 || data[0] !== 0xff || data[1] !== 0xd8) return data;
  const kept: Buffer[] = [data.subarray(0, 2)];
  let dropped = false;
  let at = 2;
  while (at + 2 <= data.length) {
    if (data[at] !== 0xff) return data;
    const marker = data[at + 1]!;
    // Fill bytes before a marker.
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if (marker === 0xd9) {
      kept.push(data.subarray(at, at + 2));
      at += 2;
      break;
    }
    if (at + 4 > data.length) return data;
    const length = data.readUInt16BE(at + 2);
    const end = at + 2 + length;
    if (length < 2 || end > data.length) return data;
    if (keepJpegSegment(marker, data, at + 4, end)) kept.push(data.subarray(at, end));
    else dropped = true;
    at = end;
    if (marker === 0xda) {
      // Entropy-coded data up to the next marker (FF00 is a stuffed byte, FFD0-FFD7 restarts).
      const scanEnd = nextMarker(data, at);
      if (scanEnd < 0) return data;
      kept.push(data.subarray(at, scanEnd));
      at = scanEnd;
    }
  }
  if (at < data.length) dropped = true;
  return dropped ? Buffer.concat(kept) : data;
}

function keepJpegSegment(marker: number, data: Buffer, from: number, end: number): boolean {
  if (marker === 0xfe) return false; // COM
  if (marker < 0xe0 || marker > 0xef) return true; // not APPn: the decoder's own
  if (marker === 0xe0 || marker === 0xee) return true; // JFIF, Adobe
  if (marker === 0xe2) return data.toString('latin1', from, Math.min(end, from + 12)) === 'ICC_PROFILE\0';
  return false;
}

/** Where the next marker after entropy-coded data starts, or -1 when the data breaks off. */
function nextMarker(data: Buffer, from: number): number {
  for (let at = from; at + 1 < data.length; at++) {
    if (data[at] !== 0xff) continue;
    const next = data[at + 1]!;
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) continue;
    return at;
  }
  return -1;
}

/** The WebP flags (VP8X) that announce EXIF and XMP chunks. */
const VP8X_EXIF = 0x08;
const VP8X_XMP = 0x04;

/**
 * The WebP (RIFF) chunks kept: every one but `EXIF` and `XMP `; the extended header's flags for
 * them are cleared and the RIFF size written anew.
 */
function stripWebp(data: Buffer): Buffer {
  if (
    data.length < 12 ||
    data.toString('latin1', 0, 4) !== 'RIFF' ||
    data.toString('latin1', 8, 12) !== 'WEBP'
  ) {
    return data;
  }
  const riffEnd = Math.min(data.length, 8 + data.readUInt32LE(4));
  const kept: Buffer[] = [];
  let dropped = riffEnd < data.length;
  let at = 12;
  while (at + 8 <= riffEnd) {
    const fourcc = data.toString('latin1', at, at + 4);
    const size = data.readUInt32LE(at + 4);
    const end = at + 8 + size + (size % 2);
    if (at + 8 + size > riffEnd) return data;
    if (fourcc === 'EXIF' || fourcc === 'XMP ') {
      dropped = true;
    } else if (fourcc === 'VP8X' && size >= 1) {
      const chunk = Buffer.from(data.subarray(at, Math.min(end, riffEnd)));
      chunk[8] = chunk[8]! & ~(VP8X_EXIF | VP8X_XMP);
      kept.push(chunk);
    } else {
      kept.push(data.subarray(at, Math.min(end, riffEnd)));
    }
    at = end;
  }
  if (!dropped) return data;
  const body = Buffer.concat(kept);
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(4 + body.length, 4);
  header.write('WEBP', 8, 'latin1');
  return Buffer.concat([header, body]);
}
