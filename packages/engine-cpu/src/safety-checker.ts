import type { OutputImage, SafetyChecker, SafetyVerdict } from '@imagegen/engines';
import sharp from 'sharp';
import { NSFW_UNSAFE_RULE } from './check-rules.ts';
import { acquirePool, type InferencePool, releasePool } from './inference-pool.ts';
import { withSharpSlot } from './sharp-slots.ts';

/** nsfwjs's MobileNetV2 looks at 224 x 224 pixels. */
const NSFW_SIDE = 224;

/**
 * When an image counts as unsafe: explicit classes (Porn, Hentai) together at least half the
 * probability, or Sexy on its own at least 0.8. Neutral and Drawing are always safe. The numbers
 * are the engine's (check-rules.ts), which its notes quote in the docs and the OpenAPI descriptions.
 */
export function isUnsafe(scores: Readonly<Record<string, number>>): boolean {
  const explicit = (scores.Porn ?? 0) + (scores.Hentai ?? 0);
  return explicit >= NSFW_UNSAFE_RULE.explicit || (scores.Sexy ?? 0) >= NSFW_UNSAFE_RULE.sexy;
}

/** The safety checker every engine's output goes through when a request sets `safety_checker`. */
export function createSafetyChecker(): SafetyChecker {
  let pool: InferencePool | undefined;
  return {
    async classify(image: OutputImage, signal: AbortSignal): Promise<SafetyVerdict> {
      pool ??= acquirePool();
      const { data, info } = await withSharpSlot(() =>
        sharp(image.data)
          .removeAlpha()
          .resize(NSFW_SIDE, NSFW_SIDE, { fit: 'fill' })
          .raw()
          .toBuffer({ resolveWithObject: true }),
      );
      const scores = await pool.run(
        'nsfw',
        {
          image: {
            data: new Uint8Array(data.buffer, data.byteOffset, data.length),
            width: info.width,
            height: info.height,
          },
        },
        { signal },
      );
      return { unsafe: isUnsafe(scores), scores };
    },
    async close() {
      if (pool) await releasePool(pool);
      pool = undefined;
    },
  };
}
