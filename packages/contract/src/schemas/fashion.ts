import Type from 'typebox';
import { CommonFields, ImageUrl, Int, Num, OptionalImageUrl, SafetyCheckerField } from './common.ts';

/** Fashion: model switch and the three virtual try-on prompts. */

const opt = Type.Optional;

export const ModelswitchPrompt = Type.Object(
  {
    input_image: ImageUrl,
    prompt: Type.String({ description: 'Describes the new model wearing the same clothes.' }),
    input_face: opt(OptionalImageUrl),
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'ModelswitchPrompt' },
);

function tryOn(title: string, garment: string) {
  return Type.Object(
    {
      cloth_image: ImageUrl,
      model_image: ImageUrl,
      num_inference_steps: Int({ gt: 0, lt: 41 }),
      guidance_scale: Num({ gt: 0, le: 20 }),
      samples: Int({ gt: 0, le: 4 }),
      ...SafetyCheckerField,
      ...CommonFields,
    },
    { title, description: `Virtual try-on of ${garment}: dresses model_image in cloth_image.` },
  );
}

export const FashionLowerPrompt = tryOn('FashionLowerPrompt', 'a lower-body garment');
export const FashionUpperPrompt = tryOn('FashionUpperPrompt', 'an upper-body garment');
export const FashionDressPrompt = tryOn('FashionDressPrompt', 'a dress');
