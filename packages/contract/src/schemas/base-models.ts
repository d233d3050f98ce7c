import Type from 'typebox';
import {
  Bool,
  CommonFields,
  HEX_COLOUR_PATTERN,
  Int,
  List,
  ListSkippingEmpty,
  Nullable,
  Num,
  OptionalImageUrl,
  SafetyCheckerField,
} from './common.ts';

/** Optimised base models: SD3/3.5, Stable Cascade, Flux. */

const opt = Type.Optional;

/** SD3.5 and Stable Cascade share their required fields; samples at most 2 on both. */
function fewSamples<const G extends { gt?: number; ge?: number }>(
  title: string,
  guidance: G,
  description: string,
) {
  return Type.Object(
    {
      prompt: Type.String(),
      negative_prompt: Type.String(),
      num_inference_steps: Int({ gt: 0, lt: 41 }),
      samples: Int({ gt: 0, le: 2 }),
      guidance_scale: Num({ ...guidance, le: 20 }),
      height: opt(Int({ gt: 0, le: 1536, default: 1024 })),
      width: opt(Int({ gt: 0, le: 1536, default: 1024 })),
      ...SafetyCheckerField,
      ...CommonFields,
    },
    { title, description },
  );
}

export const SD35Prompt = fewSamples(
  'SD35Prompt',
  { ge: 0 },
  'Stable Diffusion 3 and 3.5. guidance_scale 0 is allowed (inclusive minimum).',
);

/**
 * Named by the API reference, but no path of the original's takes it (its pages document no Stable
 * Cascade): kept as a component of openapi.json only.
 */
export const StableCascadePrompt = fewSamples('StableCascadePrompt', { gt: 0 }, 'Stable Cascade.');

/**
 * Flux and the style generator ("Flux/StylePrompt" in the API reference), one schema: Generate v3.
 * Two samples by default, as the Flux Schnell page says; its sizes stop at the reference's 1440.
 */
export const StylePrompt = Type.Object(
  {
    prompt: Type.String(),
    style: opt(
      Nullable(Type.String(), {
        default: 'realistic_portrait',
        description: 'A style added to the prompt; null for none.',
      }),
    ),
    enhance_prompt: opt(Bool(false, 'Let the service rewrite the prompt before generating.')),
    palette: opt(
      ListSkippingEmpty(Type.String({ pattern: HEX_COLOUR_PATTERN }), {
        maxItems: 5,
        description: 'Up to 5 hex colours (#RGB or #RRGGBB).',
      }),
    ),
    init_image: opt(OptionalImageUrl),
    mask_image: opt(OptionalImageUrl),
    lora_models: opt(Nullable(List(Type.String()))),
    lora_weights: opt(Nullable(List(Num({ gt: -10, le: 10 })))),
    num_inference_steps: opt(Int({ gt: 0, lt: 41, default: 30 })),
    samples: opt(Int({ gt: 0, le: 4, default: 2 })),
    guidance_scale: opt(Num({ gt: 0, le: 20, default: 7.5 })),
    strength: opt(Num({ gt: 0, le: 1, default: 0.8 })),
    height: opt(Int({ gt: 0, le: 1440, default: 1024 })),
    width: opt(Int({ gt: 0, le: 1440, default: 1024 })),
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'StylePrompt', description: 'Flux text and image generation with optional style and palette.' },
);
