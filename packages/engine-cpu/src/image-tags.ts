import { findFaces } from './face-detection.ts';
import type { InferencePool } from './inference-pool.ts';
import type { RgbImage } from './inference-protocol.ts';
import { rgbSharp } from './raw-image.ts';
import { withSharpSlot } from './sharp-slots.ts';

/**
 * image2prompt on the cpu engine: no captioning model ships in any npm package, so the answer is
 * a tag-style description assembled from real model outputs, never a made-up sentence:
 * the picture's kind (nsfwjs: Drawing vs photo), COCO objects (CenterNet), faces with estimated
 * age and gender (human), dominant colours and lighting (pixel statistics).
 */

const NAMED_COLOURS: readonly [string, number, number, number][] = [
  ['black', 20, 20, 20],
  ['dark grey', 80, 80, 80],
  ['grey', 140, 140, 140],
  ['white', 240, 240, 240],
  ['red', 200, 30, 30],
  ['dark red', 120, 20, 20],
  ['orange', 240, 140, 30],
  ['brown', 120, 75, 40],
  ['beige', 220, 200, 160],
  ['yellow', 240, 220, 40],
  ['olive', 120, 120, 40],
  ['green', 50, 160, 60],
  ['dark green', 25, 80, 35],
  ['teal', 30, 130, 130],
  ['light blue', 150, 200, 240],
  ['blue', 40, 90, 200],
  ['navy', 20, 30, 90],
  ['purple', 120, 50, 150],
  ['pink', 240, 150, 190],
];

/** The named colours covering at least 10 % of the picture, most first (at most 3). */
export async function dominantColours(image: RgbImage): Promise<string[]> {
  const { data } = await withSharpSlot(() =>
    rgbSharp(image).resize(48, 48, { fit: 'fill' }).raw().toBuffer({ resolveWithObject: true }),
  );
  const counts = new Map<string, number>();
  for (let i = 0; i < data.length; i += 3) {
    let best = NAMED_COLOURS[0]!;
    let bestDistance = Number.POSITIVE_INFINITY;
    for (const colour of NAMED_COLOURS) {
      const d =
        (data[i]! - colour[1]) ** 2 + (data[i + 1]! - colour[2]) ** 2 + (data[i + 2]! - colour[3]) ** 2;
      if (d < bestDistance) {
        bestDistance = d;
        best = colour;
      }
    }
    counts.set(best[0], (counts.get(best[0]) ?? 0) + 1);
  }
  const total = data.length / 3;
  return [...counts.entries()]
    .filter(([, n]) => n / total >= 0.1)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([name]) => name);
}

export async function describeImage(
  pool: InferencePool,
  image: RgbImage,
  signal?: AbortSignal,
): Promise<{ text: string; facts: Record<string, unknown> }> {
  const withSignal = signal ? { signal } : {};
  const small = await withSharpSlot(() => rgbSharp(image).resize(224, 224, { fit: 'fill' }).raw().toBuffer());
  const [kind, objects, faces, colours, stats] = await Promise.all([
    pool.run('nsfw', { image: { data: new Uint8Array(small), width: 224, height: 224 } }, withSignal),
    pool.run('objects', { image }, withSignal),
    findFaces(pool, image, signal),
    dominantColours(image),
    withSharpSlot(() => rgbSharp(image).stats()),
  ]);
  const tags: string[] = [];
  tags.push((kind.Drawing ?? 0) + (kind.Hentai ?? 0) > 0.5 ? 'drawing' : 'photo');
  const counted = new Map<string, number>();
  for (const object of objects) counted.set(object.label, (counted.get(object.label) ?? 0) + 1);
  for (const [label, n] of counted) tags.push(n > 1 ? `${n} ${label}s` : label);
  for (const face of faces.slice(0, 5)) {
    const who = face.gender === 'male' ? 'man' : face.gender === 'female' ? 'woman' : 'person';
    tags.push(face.age !== undefined ? `${who} about ${Math.round(face.age)} years old` : who);
  }
  if (faces.length > 5) tags.push(`${faces.length} faces`);
  if (colours.length > 0) tags.push(`${colours.join(' and ')} tones`);
  const luminance = stats.channels
    .slice(0, 3)
    .reduce((sum, c, i) => sum + c.mean * [0.299, 0.587, 0.114][i]!, 0);
  if (luminance < 70) tags.push('dark, low-key lighting');
  else if (luminance > 185) tags.push('bright, high-key lighting');
  tags.push(
    image.width > image.height * 1.15
      ? 'landscape orientation'
      : image.height > image.width * 1.15
        ? 'portrait orientation'
        : 'square format',
  );
  return {
    text: tags.join(', '),
    facts: { objects, faces: faces.length, colours, kind },
  };
}
