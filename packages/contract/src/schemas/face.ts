import Type from 'typebox';
import {
  Base64Field,
  Bool,
  CommonFields,
  ImageUrl,
  ImageUrlList,
  Int,
  List,
  Num,
  OptionalImageUrl,
  SafetyCheckerField,
  Scheduler,
} from './common.ts';

/** Face control pipelines: face lock, face swap, instant model, Photomaker. */

const opt = Type.Optional;

export const FaceLockPrompt = Type.Object(
  {
    model_id: Type.String({ description: 'Base model the face is locked onto.' }),
    input_face: ImageUrl,
    prompt: Type.String(),
    negative_prompt: Type.String(),
    num_inference_steps: Int({ gt: 0, lt: 41 }),
    samples: Int({ gt: 0, le: 4 }),
    guidance_scale: Num({ gt: 0, le: 20 }),
    supp_image1: opt(OptionalImageUrl),
    id_mix: opt(Bool(undefined, 'Mix the identity of input_face and supp_image1.')),
    id_scale: opt(Num({ gt: 0, le: 1, default: 0.8 })),
    height: opt(Int({ gt: 0, le: 1536, default: 768 })),
    width: opt(Int({ gt: 0, le: 1536, default: 768 })),
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'FaceLockPrompt' },
);

export const FaceSwapPrompt = Type.Object(
  {
    input_face: ImageUrl,
    input_image: ImageUrl,
    ...Base64Field,
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'FaceSwapPrompt', description: 'Puts the face of input_face into input_image.' },
);

export const InstamodelPrompt = Type.Object(
  {
    input_face: ImageUrl,
    prompt: Type.String(),
    negative_prompt: Type.String(),
    num_inference_steps: opt(Int({ gt: 0, lt: 41, default: 9 })),
    samples: opt(Int({ gt: 0, le: 4, default: 1 })),
    guidance_scale: opt(Num({ gt: 0, le: 20, default: 1 })),
    height: opt(Int({ gt: 0, le: 1024, default: 1024 })),
    width: opt(Int({ gt: 0, le: 1024, default: 1024 })),
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'InstamodelPrompt' },
);

export const PhotomakerPrompt = Type.Object(
  {
    prompt: Type.String(),
    negative_prompt: Type.String(),
    init_images: ImageUrlList('Photos of the person.'),
    num_inference_steps: Int({ gt: 0, lt: 20 }),
    samples: Int({ gt: 0, le: 4 }),
    start_merge_step: Int({ gt: 0, le: 30 }),
    guidance_scale: Num({ gt: 0, le: 20 }),
    scheduler: opt(Scheduler('EulerDiscreteScheduler')),
    lora_models: opt(List(Type.String())),
    lora_weights: opt(List(Num({ gt: -10, le: 10 }))),
    height: opt(Int({ gt: 0, le: 1536, default: 1024 })),
    width: opt(Int({ gt: 0, le: 1536, default: 1024 })),
    ...SafetyCheckerField,
    ...CommonFields,
  },
  { title: 'PhotomakerPrompt' },
);
