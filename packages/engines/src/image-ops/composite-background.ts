import sharp from 'sharp';

/**
 * Puts a cut-out subject (RGBA, e.g. the cpu engine's background removal) on a new background, for
 * bgchanger when a style_image is given: the background is scaled to cover the subject's frame and
 * centred, the subject laid over it by its alpha. Returns the composite (PNG, RGB) and the subject
 * mask (1-channel PNG, white = subject) a diffusion pass may use to harmonise the edges.
 */
export async function compositeOnBackground(
  subject: Buffer,
  background: Buffer,
): Promise<{ image: Buffer; mask: Buffer; width: number; height: number }> {
  const cutout = sharp(subject).rotate().ensureAlpha();
  const { width, height } = await cutout
    .clone()
    .metadata()
    .then((m) => ({ width: m.width!, height: m.height! }));
  const subjectPng = await cutout.png().toBuffer();
  const image = await sharp(background)
    .rotate()
    .resize(width, height, { fit: 'cover', position: 'centre' })
    .removeAlpha()
    .composite([{ input: subjectPng, blend: 'over' }])
    .png()
    .toBuffer();
  const mask = await sharp(subjectPng).extractChannel(3).png().toBuffer();
  return { image, mask, width, height };
}
