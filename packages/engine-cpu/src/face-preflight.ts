import { EngineInputError, type EngineJob, type Preflight } from '@imagegen/engines';
import { FACE_CHECKED_FIELDS } from './check-rules.ts';
import { findFaces } from './face-detection.ts';
import { acquirePool, type InferencePool } from './inference-pool.ts';
import { decodeInput, imageList } from './raw-image.ts';

let pool: InferencePool | undefined;

/**
 * Fails face pipelines at once when an input image holds no face, before any GPU time is spent.
 * Which fields must show a face is the engine's table (check-rules.ts), which its notes quote in
 * the docs and the OpenAPI descriptions.
 * The pool is the process's shared one, taken on first use and kept for the process's life.
 */
export const facePreflight: Preflight = {
  pipelines: Object.keys(FACE_CHECKED_FIELDS),
  async check(job: EngineJob, signal: AbortSignal): Promise<void> {
    for (const field of FACE_CHECKED_FIELDS[job.pipeline] ?? []) {
      const images = imageList(job.images, field);
      for (const [index, image] of images.entries()) {
        signal.throwIfAborted();
        pool ??= acquirePool();
        const which = images.length > 1 || Array.isArray(job.images[field]) ? `${field}[${index}]` : field;
        const faces = await findFaces(pool, await decodeInput(image, which, 1024), signal);
        if (faces.length === 0) {
          throw new EngineInputError(
            `${which} shows no face (${image.url}); ${job.pipeline} needs a photo with a clearly visible face`,
          );
        }
      }
    }
  },
};
