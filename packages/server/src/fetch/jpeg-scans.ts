/**
 * A progressive JPEG is decoded once per scan: each scan adds detail to every block it covers, so
 * a file of 20 MB can hold hundreds of thousands of tiny scans and cost hours to decode, whatever
 * its pixel count. Real encoders write at most a few dozen (libjpeg's default progression 10,
 * mozjpeg's optimised ones fewer than 20); past this many the image is refused before decoding.
 */
export const MAX_JPEG_SCANS = 100;

/**
 * The number of scans (SOS segments) of a JPEG, counting no further than `stopAfter + 1`. Walks
 * the segments by their lengths and skips each scan's entropy-coded data to the next marker, so
 * it costs one pass over the bytes at most.
 */
export function countJpegScans(data: Uint8Array, stopAfter = MAX_JPEG_SCANS): number {
  let scans = 0;
  let at = 2; // after SOI
  while (at + 1 < data.length) {
    if (data[at] !== 0xff) return scans; // not a marker where one must be: the decoder will say
    const marker = data[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xd9) return scans; // EOI
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      at += 2; // TEM, RSTn, SOI: no length
      continue;
    }
    if (at + 3 >= data.length) return scans;
    at += 2 + ((data[at + 2]! << 8) | data[at + 3]!);
    if (marker !== 0xda) continue;
    if (++scans > stopAfter) return scans;
    // Entropy-coded data: a 0xFF in it is followed by 0x00 (stuffing) or a restart marker.
    for (;;) {
      const next = data.indexOf(0xff, at);
      if (next < 0 || next + 1 >= data.length) return scans;
      const after = data[next + 1]!;
      if (after === 0x00 || (after >= 0xd0 && after <= 0xd7) || after === 0xff) {
        at = next + (after === 0xff ? 1 : 2);
        continue;
      }
      at = next;
      break;
    }
  }
  return scans;
}
