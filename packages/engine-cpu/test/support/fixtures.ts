import { createRequire } from 'node:module';
import path from 'node:path';
import {
  type EngineJob,
  type InputImage,
  inMemoryImage,
  type OutputImage,
  type RunContext,
} from '@imagegen/engines';
import sharp from 'sharp';

/**
 * Test images, made at test time: synthetic scenes drawn with sharp (whose true masks are known
 * exactly) and crops of the MIT-licensed photo sheet that ships inside @vladmandic/human.
 */

const require = createRequire(import.meta.url);
const HUMAN_SAMPLES = path.join(
  path.dirname(path.dirname(require.resolve('@vladmandic/human'))),
  'assets',
  'samples.jpg',
);

/** The sheet's top row holds 8 thumbnails of 160 x 158 px (at its 1280 px width). */
export function humanSample(index: number): Promise<Buffer> {
  return sharp(HUMAN_SAMPLES)
    .extract({ left: index * 160, top: 0, width: 160, height: 156 })
    .png()
    .toBuffer();
}

/** A man at a dinner table, facing the camera. */
export async function facePhoto(): Promise<Buffer> {
  return sharp(HUMAN_SAMPLES)
    .extract({ left: 324, top: 0, width: 212, height: 156 })
    .resize(424, 312)
    .png()
    .toBuffer();
}

/** A real photograph at its own resolution (a 152 px square of the sheet's second thumbnail). */
export async function photoCrop(): Promise<Buffer> {
  return sharp(HUMAN_SAMPLES).extract({ left: 164, top: 2, width: 152, height: 152 }).png().toBuffer();
}

const SUBJECT = (w: number, h: number, fill: string) =>
  `<ellipse cx="${w * 0.5}" cy="${h * 0.56}" rx="${w * 0.22}" ry="${h * 0.3}" fill="${fill}"/>` +
  `<rect x="${w * 0.4}" y="${h * 0.14}" width="${w * 0.2}" height="${h * 0.16}" rx="${w * 0.03}" fill="${fill}"/>`;

/**
 * A product shot: a glossy bottle-like object on a textured studio backdrop. Returns the scene and
 * its exact subject mask (white = subject).
 */
export async function productScene(w = 512, h = 512): Promise<{ scene: Buffer; mask: Buffer }> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">
    <defs>
      <linearGradient id="bg" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#d9dee4"/><stop offset="1" stop-color="#9aa3ad"/></linearGradient>
      <radialGradient id="obj" cx="0.4" cy="0.35" r="0.8"><stop offset="0" stop-color="#ffb36b"/><stop offset="0.6" stop-color="#d2471c"/><stop offset="1" stop-color="#7a1f08"/></radialGradient>
    </defs>
    <rect width="${w}" height="${h}" fill="url(#bg)"/>
    ${SUBJECT(w, h, 'url(#obj)')}
  </svg>`;
  const noise = await seededNoise(w, h, 6);
  const scene = await sharp(Buffer.from(svg))
    .composite([{ input: noise, blend: 'add' }])
    .removeAlpha()
    .png()
    .toBuffer();
  const mask = await sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="${w}" height="${h}" fill="#000"/>${SUBJECT(w, h, '#fff')}</svg>`,
    ),
  )
    .extractChannel(0)
    .raw()
    .toBuffer();
  return { scene, mask };
}

/** A landscape without people: sky, sun, hills and a lake. */
export async function landscape(w = 640, h = 400): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">
    <defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#4a90d9"/><stop offset="1" stop-color="#cfe6f7"/></linearGradient></defs>
    <rect width="${w}" height="${h}" fill="url(#sky)"/>
    <circle cx="${w * 0.8}" cy="${h * 0.2}" r="${h * 0.08}" fill="#fff4b0"/>
    <path d="M0 ${h * 0.6} Q ${w * 0.25} ${h * 0.35} ${w * 0.5} ${h * 0.6} T ${w} ${h * 0.55} V ${h} H 0 Z" fill="#3f7d3a"/>
    <rect y="${h * 0.78}" width="${w}" height="${h * 0.22}" fill="#2f6fa0"/>
  </svg>`;
  const noise = await seededNoise(w, h, 5);
  return sharp(Buffer.from(svg))
    .composite([{ input: noise, blend: 'add' }])
    .removeAlpha()
    .png()
    .toBuffer();
}

export async function inputImage(data: Buffer, url = 'https://images.example/test.png'): Promise<InputImage> {
  const meta = await sharp(data).metadata();
  return inMemoryImage(data, { contentType: 'image/png', width: meta.width!, height: meta.height!, url });
}

export function job(
  pipeline: string,
  input: Record<string, unknown>,
  images: EngineJob['images'],
): EngineJob {
  return { pipeline, input, images, seed: 1 };
}

export function context(): RunContext & { fractions: number[] } {
  const fractions: number[] = [];
  return { signal: new AbortController().signal, progress: (f) => fractions.push(f), fractions };
}

/** Intersection over union of two masks (values above 127 count as inside). */
export function iou(a: Uint8Array | Buffer, b: Uint8Array | Buffer): number {
  let inter = 0;
  let union = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]! > 127;
    const y = b[i]! > 127;
    if (x && y) inter++;
    if (x || y) union++;
  }
  return union === 0 ? 1 : inter / union;
}

export async function channel(image: OutputImage | Buffer, index: 0 | 1 | 2 | 3): Promise<Buffer> {
  const data = Buffer.isBuffer(image) ? image : image.data;
  return sharp(data).extractChannel(index).raw().toBuffer();
}

/** Peak signal-to-noise ratio of two same-sized images, in dB. */
export async function psnr(a: Buffer, b: Buffer): Promise<number> {
  const x = await sharp(a).removeAlpha().raw().toBuffer();
  const y = await sharp(b).removeAlpha().raw().toBuffer();
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += (x[i]! - y[i]!) ** 2;
  return 10 * Math.log10((255 * 255) / (sum / x.length));
}

/** Zero-mean noise as a PNG to add onto a drawing: seeded, so every run draws the same image. */
async function seededNoise(w: number, h: number, amplitude: number): Promise<Buffer> {
  let state = 0x9e3779b9;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  // Added with blend 'add' onto the drawing, so the noise is one-sided: 0 .. 2 x amplitude.
  const data = Buffer.alloc(w * h * 3);
  for (let i = 0; i < data.length; i++) data[i] = Math.round(random() * 2 * amplitude);
  return sharp(data, { raw: { width: w, height: h, channels: 3 } })
    .png()
    .toBuffer();
}
