/**
 * The rules of the engine's checks, as data: the NSFW checker (safety-checker.ts), the face check
 * of face pipelines' inputs (face-preflight.ts) and the limit on what one job makes
 * (output-pixels.ts) run on them, and the engine's notes (engine-notes.ts) quote them in the
 * OpenAPI descriptions. Reading it loads no model.
 */

/** When the NSFW checker counts an output as unsafe (nsfwjs class probabilities). */
export const NSFW_UNSAFE_RULE = { explicit: 0.5, sexy: 0.8 } as const;

/** The request fields whose images must each show a face, checked before any generation runs. */
export const FACE_CHECKED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  '/faceswap/v1': ['input_face', 'input_image'],
  '/facelock/v1': ['input_face', 'supp_image1'],
  '/facelock/v2': ['input_face', 'supp_image1'],
  '/instamodel/v1': ['input_face'],
  '/photomaker/v1': ['init_images'],
};

/**
 * The most pixels one job makes unless IMAGEGEN_CPU_MAX_OUTPUT_PIXELS says otherwise: 4096 × 4096.
 * Upscaling costs in proportion to what it makes (the model runs on every output pixel, on a CPU)
 * and holds the whole result in memory: a 143 KB picture of 7000 × 7000 at scale 4 would run for
 * hours and hold gigabytes.
 */
export const DEFAULT_MAX_OUTPUT_PIXELS = 4096 * 4096;
