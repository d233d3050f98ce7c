/**
 * What the bytes are, from their magic numbers: a server's Content-Type is not trusted, and
 * formats that can reach outside themselves (SVG) or that we do not serve are not accepted.
 */
export type SniffedImageType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';

export function sniffImageType(data: Buffer): SniffedImageType | null {
  if (data.length >= 8 && data.subarray(0, 8).equals(PNG_SIGNATURE)) return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (
    data.length >= 12 &&
    data.toString('latin1', 0, 4) === 'RIFF' &&
    data.toString('latin1', 8, 12) === 'WEBP'
  ) {
    return 'image/webp';
  }
  if (data.length >= 6 && /^GIF8[79]a$/.test(data.toString('latin1', 0, 6))) return 'image/gif';
  return null;
}

/** sharp's `format` for each sniffed type: the decoder must agree with the magic bytes. */
export const SHARP_FORMAT: Readonly<Record<SniffedImageType, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

/** A short, printable view of the first bytes, for "not an image" messages. */
export function describeStart(data: Buffer): string {
  const text = data.toString('latin1', 0, Math.min(data.length, 16));
  return /^[\x20-\x7e]*$/.test(text)
    ? JSON.stringify(text)
    : `0x${data.toString('hex', 0, Math.min(8, data.length))}`;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
