import type { GrayImage, RgbImage } from './inference-protocol.ts';

/**
 * Alpha matting by guided filtering (He, Sun and Tang): the segmentation mask is refined inside
 * a trimap's unknown band so the alpha follows the image's own edges (hair, fur, soft borders).
 * Pixels the mask is sure of (alpha >= 240 or <= 10, after eroding each side by `erode` pixels)
 * keep their value, as rembg's alpha_matting does with its trimap.
 */
export function alphaMatting(
  image: RgbImage,
  mask: GrayImage,
  radius = 8,
  eps = 1e-3,
  erode = 10,
): GrayImage {
  const { width: w, height: h } = mask;
  const n = w * h;
  const guide = new Float32Array(n);
  const p = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const r = image.data[3 * i]!;
    const g = image.data[3 * i + 1]!;
    const b = image.data[3 * i + 2]!;
    guide[i] = (0.299 * r + 0.587 * g + 0.114 * b) / 255;
    p[i] = mask.data[i]! / 255;
  }
  const meanI = boxMean(guide, w, h, radius);
  const meanP = boxMean(p, w, h, radius);
  const prod = new Float32Array(n);
  const sq = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    prod[i] = guide[i]! * p[i]!;
    sq[i] = guide[i]! * guide[i]!;
  }
  const meanIP = boxMean(prod, w, h, radius);
  const meanII = boxMean(sq, w, h, radius);
  const a = new Float32Array(n);
  const b = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const variance = meanII[i]! - meanI[i]! * meanI[i]!;
    const covariance = meanIP[i]! - meanI[i]! * meanP[i]!;
    a[i] = covariance / (variance + eps);
    b[i] = meanP[i]! - a[i]! * meanI[i]!;
  }
  const meanA = boxMean(a, w, h, radius);
  const meanB = boxMean(b, w, h, radius);

  const sureFg = erodeBinary(mask, (v) => v >= 240, erode);
  const sureBg = erodeBinary(mask, (v) => v <= 10, erode);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (sureFg[i]) out[i] = 255;
    else if (sureBg[i]) out[i] = 0;
    else out[i] = Math.max(0, Math.min(255, Math.round((meanA[i]! * guide[i]! + meanB[i]!) * 255)));
  }
  return { data: out, width: w, height: h };
}

/** Mean over a (2r+1)^2 window, clipped at the borders, in O(n) with a summed-area table. */
function boxMean(src: Float32Array, w: number, h: number, r: number): Float32Array {
  const sat = new Float64Array((w + 1) * (h + 1));
  for (let y = 0; y < h; y++) {
    let row = 0;
    for (let x = 0; x < w; x++) {
      row += src[y * w + x]!;
      sat[(y + 1) * (w + 1) + x + 1] = sat[y * (w + 1) + x + 1]! + row;
    }
  }
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const y0 = Math.max(0, y - r);
    const y1 = Math.min(h, y + r + 1);
    for (let x = 0; x < w; x++) {
      const x0 = Math.max(0, x - r);
      const x1 = Math.min(w, x + r + 1);
      const sum =
        sat[y1 * (w + 1) + x1]! - sat[y0 * (w + 1) + x1]! - sat[y1 * (w + 1) + x0]! + sat[y0 * (w + 1) + x0]!;
      out[y * w + x] = sum / ((y1 - y0) * (x1 - x0));
    }
  }
  return out;
}

/** Pixels whose whole (2r+1)^2 neighbourhood passes `test`: a square erosion via the same table. */
function erodeBinary(mask: GrayImage, test: (v: number) => boolean, r: number): Uint8Array {
  const { width: w, height: h } = mask;
  const on = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) on[i] = test(mask.data[i]!) ? 1 : 0;
  const mean = boxMean(on, w, h, r);
  const out = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) out[i] = mean[i]! > 0.9999 ? 1 : 0;
  return out;
}
