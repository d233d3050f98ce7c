import { UnreadableBody } from './json-body.ts';

/**
 * The text of a JSON body, as Python's `json.loads(bytes)` finds it: the encoding chosen by
 * `json.detect_encoding` (a UTF-8, UTF-16 or UTF-32 byte-order mark, else the pattern of zero
 * bytes at the start, else UTF-8), decoded with `surrogatepass`, so an encoded lone surrogate is
 * kept as one. Bytes that do not decode throw an {@link UnreadableBody} (FastAPI answers 400).
 */
export function decodeJsonBytes(bytes: Uint8Array): string {
  const [b0, b1, b2, b3] = bytes;
  if (
    (b0 === 0xff && b1 === 0xfe && b2 === 0 && b3 === 0) ||
    (b0 === 0 && b1 === 0 && b2 === 0xfe && b3 === 0xff)
  ) {
    return utf32(bytes.subarray(4), b0 === 0xff);
  }
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff))
    return utf16(bytes.subarray(2), b0 === 0xff);
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) return utf8(bytes.subarray(3));
  if (bytes.length >= 4) {
    // 00 00 -- --: UTF-32-BE; 00 XX: UTF-16-BE; XX 00 00 00: UTF-32-LE; XX 00 (not 00 00): UTF-16-LE.
    if (b0 === 0) return b1 ? utf16(bytes, false) : utf32(bytes, false);
    if (b1 === 0) return b2 || b3 ? utf16(bytes, true) : utf32(bytes, true);
  } else if (bytes.length === 2) {
    if (b0 === 0) return utf16(bytes, false);
    if (b1 === 0) return utf16(bytes, true);
  }
  return utf8(bytes);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function undecodable(encoding: string): never {
  throw new UnreadableBody(`the body is not valid ${encoding}`);
}

function utf8(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    // Invalid UTF-8 for the web, but Python's surrogatepass still reads encoded surrogates.
    return utf8WithSurrogates(bytes);
  }
}

/** UTF-8 as CPython decodes it with `surrogatepass`: strict, except that ED A0..BF xx is a surrogate. */
function utf8WithSurrogates(bytes: Uint8Array): string {
  const units: number[] = [];
  const continuation = (i: number, low = 0x80, high = 0xbf) => {
    const b = bytes[i];
    if (b === undefined || b < low || b > high) undecodable('UTF-8');
    return b & 0x3f;
  };
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    if (b < 0x80) {
      units.push(b);
      i += 1;
    } else if (b >= 0xc2 && b <= 0xdf) {
      units.push(((b & 0x1f) << 6) | continuation(i + 1));
      i += 2;
    } else if (b >= 0xe0 && b <= 0xef) {
      const second = continuation(i + 1, b === 0xe0 ? 0xa0 : 0x80);
      units.push(((b & 0x0f) << 12) | (second << 6) | continuation(i + 2));
      i += 3;
    } else if (b >= 0xf0 && b <= 0xf4) {
      const second = continuation(i + 1, b === 0xf0 ? 0x90 : 0x80, b === 0xf4 ? 0x8f : 0xbf);
      const point = ((b & 0x07) << 18) | (second << 12) | (continuation(i + 2) << 6) | continuation(i + 3);
      units.push(0xd800 + ((point - 0x10000) >> 10), 0xdc00 + ((point - 0x10000) & 0x3ff));
      i += 4;
    } else {
      undecodable('UTF-8');
    }
  }
  return fromCodeUnits(units);
}

/** UTF-16 (`surrogatepass`: lone surrogates are kept); an odd byte count does not decode. */
function utf16(bytes: Uint8Array, littleEndian: boolean): string {
  if (bytes.length % 2 !== 0) undecodable('UTF-16');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const units: number[] = [];
  for (let i = 0; i < bytes.length; i += 2) units.push(view.getUint16(i, littleEndian));
  return fromCodeUnits(units);
}

/** UTF-32 (`surrogatepass`: surrogate code points are kept); past U+10FFFF does not decode. */
function utf32(bytes: Uint8Array, littleEndian: boolean): string {
  if (bytes.length % 4 !== 0) undecodable('UTF-32');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const units: number[] = [];
  for (let i = 0; i < bytes.length; i += 4) {
    const point = view.getUint32(i, littleEndian);
    if (point > 0x10ffff) undecodable('UTF-32');
    if (point < 0x10000) units.push(point);
    else units.push(0xd800 + ((point - 0x10000) >> 10), 0xdc00 + ((point - 0x10000) & 0x3ff));
  }
  return fromCodeUnits(units);
}

function fromCodeUnits(units: number[]): string {
  let text = '';
  // In slices: String.fromCharCode takes its arguments on the stack.
  for (let i = 0; i < units.length; i += 8192) text += String.fromCharCode(...units.slice(i, i + 8192));
  return text;
}
