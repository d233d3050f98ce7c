import Type from 'typebox';
import {
  Base64Field,
  Bool,
  CommonFields,
  Enum,
  ImageUrl,
  Int,
  List,
  ModelHash,
  Num,
  OptionalImageUrl,
  SafetyCheckerField,
} from './common.ts';
import { SUPERRESOLUTION_MODELS } from './superresolution-models.ts';

/** Editing and utility pipelines: outpainting, relight, logo, background, prompts, upscaling. */

const opt = Type.Optional;

const INPAINT_OPERATIONS = ['fill', 'replace', 'remove'] as const;
const OUTPAINT_DIRECTIONS = ['left', 'right', 'up', 'down'] as const;
const LIGHT_SOURCES = ['left', 'right', 'top', 'bottom'] as const;
const UPSCALER_TYPES = ['deblur', 'variation'] as const;

export const InpaintAnythingPrompt = Type.Object(
  {
    input_image: ImageUrl,
    prompt: Type.String(),
    operation: opt(Enum(INPAINT_OPERATIONS, { default: 'fill' })),
    input_coords: opt(List(Type.Integer(), { description: 'Point(s) on the object, as x, y pairs.' })),
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'InpaintAnythingPrompt' },
);

export const OutpaintingPrompt = Type.Object(
  {
    prompt: Type.String(),
    init_image: ImageUrl,
    num_inference_steps: Int({ gt: 0, lt: 41 }),
    guidance_scale: Num({ gt: 0, le: 20 }),
    direction: List(Enum(OUTPAINT_DIRECTIONS)),
    strength: opt(Num({ gt: 0, le: 1, default: 1 })),
    samples: opt(Int({ gt: 0, le: 4, default: 1 })),
    expansion: opt(
      List(Int({ gt: 0, le: 256 }), {
        default: [64],
        description: 'Pixels added per direction, in the order of `direction`; one value applies to all.',
      }),
    ),
    overlap: opt(
      Num({
        gt: 0,
        le: 0.05,
        description:
          "How far the new area blends into the picture, as a share of the grown canvas's longer side.",
      }),
    ),
    horizontal_tile: opt(Type.Integer({ description: 'Horizontal tiles for large canvases.' })),
    vertical_tile: opt(Type.Integer({ description: 'Vertical tiles for large canvases.' })),
    stretch_area: opt(
      Type.Number({
        description: 'The share of the picture along each grown side stretched over the new area.',
      }),
    ),
    stretch_scale: opt(Type.Number({ description: 'How far that band is stretched outward.' })),
    resolution: opt(Int({ gt: 0, le: 1024, default: 1024 })),
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'OutpaintingPrompt' },
);

export const RelightPrompt = Type.Object(
  {
    init_image: ImageUrl,
    prompt: Type.String(),
    samples: Int({ gt: 0, le: 4 }),
    guidance_scale: opt(Num({ gt: 0, le: 20, default: 8 })),
    light: opt(Enum(LIGHT_SOURCES, { default: 'left', description: 'Where the light comes from.' })),
    height: opt(Int({ gt: 0, le: 1536, default: 1024 })),
    width: opt(Int({ gt: 0, le: 1536, default: 1024 })),
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'RelightPrompt' },
);

export const LogoPrompt = Type.Object(
  {
    prompt: Type.String(),
    image: ImageUrl,
    logo_prompt: opt(
      Type.String({
        description: "What the mark shows (its subject, its lettering), beside prompt's finish.",
      }),
    ),
    height: opt(Int({ gt: 0, le: 1536, default: 1024 })),
    width: opt(Int({ gt: 0, le: 1536, default: 1024 })),
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'LogoPrompt' },
);

export const BgRemoverPrompt = Type.Object(
  {
    init_image: ImageUrl,
    only_mask: opt(Bool(false, 'Answer the mask only, as a grayscale PNG (white = subject).')),
    mask_background: opt(
      Bool(
        false,
        'Invert the mask: keep the background and remove the subject (with `only_mask`: the inverted mask).',
      ),
    ),
    post_process_mask: opt(
      Bool(false, 'Clean the mask into a binary one: threshold, 3 px median, blur, threshold again.'),
    ),
    alpha_matting: opt(
      Bool(false, 'Refine the edges (hair, fur) against the image with a guided filter in a trimap band.'),
    ),
    face_mask: opt(Bool(false, 'Keep every face that face detection finds wholly in the subject.')),
    ...Base64Field,
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'BgRemoverPrompt' },
);

export const BgChangerPrompt = Type.Object(
  {
    init_image: ImageUrl,
    prompt: Type.String(),
    negative_prompt: Type.String(),
    style_image: opt(OptionalImageUrl),
    ...Base64Field,
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'BgChangerPrompt' },
);

export const Image2PromptRequest = Type.Object(
  { input_image: ImageUrl, ...CommonFields },
  { title: 'Image2PromptRequest' },
);

export const SuperresolutionPrompt = Type.Object(
  {
    model_name: Type.Union([Enum(SUPERRESOLUTION_MODELS), ModelHash], {
      description: 'A named upscaler, or the hash of an uploaded one.',
    }),
    init_image: ImageUrl,
    scale_factor: Num({ gt: 0, le: 4, description: 'Output size over input size, exactly.' }),
    tile: Int({ ge: 128, le: 256, description: 'Patch size in pixels: smaller patches use less memory.' }),
    face_enhance: opt(Bool(false, 'Restore faces with a face-restoration model.')),
    ...Base64Field,
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'SuperresolutionPrompt' },
);

export const UpscalerPrompt = Type.Object(
  {
    input_image: ImageUrl,
    prompt: Type.String(),
    type: opt(
      Enum(UPSCALER_TYPES, {
        default: 'deblur',
        description:
          '`deblur` restores and enlarges faithfully; `variation` re-imagines detail with a diffusion model.',
      }),
    ),
    ...Base64Field,
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'UpscalerPrompt' },
);
