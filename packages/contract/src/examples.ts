/**
 * One valid request body per operation, keyed by path: the OpenAPI examples, the docs' samples
 * and the base every generated test changes one field of.
 */

const img = (name: string) => `https://images.example.com/${name}.png`;

/** Face lock v1 and v2 take the same request; only the family of `model_id` differs. */
const faceLock = (modelId: string) => ({
  model_id: modelId,
  input_face: img('face'),
  prompt: 'astronaut portrait',
  negative_prompt: 'blurry',
  num_inference_steps: 30,
  samples: 1,
  guidance_scale: 7.5,
});

const sd = { prompt: 'a lighthouse at dawn, oil painting', negative_prompt: 'blurry, low quality' };

export const EXAMPLES: Readonly<Record<string, Record<string, unknown>>> = {
  '/sd/text2image/v1': { ...sd, samples: 1, num_inference_steps: 20 },
  '/sd/image2image/v1': { ...sd, init_image: img('sketch'), strength: 0.7 },
  '/sd/inpainting/v1': { ...sd, init_image: img('room'), mask_image: img('room-mask') },
  '/sd/controlnet/v1': { ...sd, init_images: [img('pose')], controlnets: ['openpose'] },
  '/sdxl/text2image/v1': { ...sd, samples: 2, width: 1024, height: 1024 },
  '/sdxl/image2image/v1': { ...sd, init_image: img('sketch') },
  '/sdxl/inpainting/v1': { ...sd, init_image: img('room'), mask_image: img('room-mask') },
  '/sdxl/controlnet/v1': { ...sd, init_images: [img('edges')] },
  '/generate/v1': {
    prompt: 'cat wizard, gandalf, lord of the rings, detailed, fantasy, cute, adorable, Pixar, Disney, 8k',
    style: 'realistic_portrait',
  },
  '/generate/v2': {
    prompt: 'cat wizard, gandalf, lord of the rings, detailed, fantasy, cute, adorable, Pixar, Disney, 8k',
  },
  '/generate/v3': {
    prompt:
      'High end wildlife photography, beautiful colourful toucan sitting on a tree branch, trending on artstation',
    width: 1024,
    height: 1024,
  },
  '/sd3/v1': {
    prompt: 'a glass sculpture of a whale',
    negative_prompt: 'text',
    num_inference_steps: 28,
    samples: 1,
    guidance_scale: 7,
  },
  '/sd3_5/v1': {
    prompt: 'a glass sculpture of a whale',
    negative_prompt: 'text',
    num_inference_steps: 28,
    samples: 2,
    guidance_scale: 4.5,
  },
  '/superresolution/v1': {
    model_name: 'RealESRGAN_x4plus',
    init_image: img('small'),
    scale_factor: 4,
    tile: 128,
  },
  '/upscaler/v1': { input_image: img('small'), prompt: 'sharp product photo' },
  '/image2prompt/v1': { input_image: img('scene') },
  '/faceswap/v1': { input_face: img('face'), input_image: img('portrait') },
  '/relight/v1': { init_image: img('portrait'), prompt: 'golden hour', samples: 1, light: 'right' },
  '/instamodel/v1': { input_face: img('face'), prompt: 'studio portrait', negative_prompt: 'cartoon' },
  '/facelock/v1': faceLock('sd1.5'),
  '/facelock/v2': faceLock('sdxl'),
  '/bgremover/v1': { init_image: img('product') },
  '/bgchanger/v1': { init_image: img('product'), prompt: 'on a marble table', negative_prompt: 'clutter' },
  '/photomaker/v1': {
    prompt: 'a person img as a knight',
    negative_prompt: 'blurry',
    init_images: [img('person')],
    num_inference_steps: 19,
    samples: 1,
    start_merge_step: 10,
    guidance_scale: 5,
  },
  '/outpainting/v1': {
    prompt: 'a wide beach',
    init_image: img('beach'),
    num_inference_steps: 30,
    guidance_scale: 7,
    direction: ['left', 'right'],
  },
  '/logo/v1': { prompt: 'a coffee shop logo', image: img('logo-sketch') },
  '/fashion_lower/v1': {
    cloth_image: img('trousers'),
    model_image: img('model'),
    num_inference_steps: 30,
    guidance_scale: 2,
    samples: 1,
  },
  '/fashion_upper/v1': {
    cloth_image: img('shirt'),
    model_image: img('model'),
    num_inference_steps: 30,
    guidance_scale: 2,
    samples: 1,
  },
  '/fashion_dress/v1': {
    cloth_image: img('dress'),
    model_image: img('model'),
    num_inference_steps: 30,
    guidance_scale: 2,
    samples: 1,
  },
  '/modelswitch/v1': { input_image: img('outfit'), prompt: 'a tall woman with curly hair' },
  '/inpaint_anything/v1': { input_image: img('street'), prompt: 'a red car', input_coords: [320, 240] },
  '/load_model/v1': {
    model_name: 'My watercolour LoRA',
    pretrained_model_path: null,
    model_url: 'https://models.example.com/watercolour.safetensors',
    base_model: 'sdxl',
    model_type: 'lora',
    description: 'Soft watercolour style',
    sample_images: [img('watercolour-sample')],
    visibility: 'private',
    model_extension: 'safetensors',
    revision: 'fp16',
  },
  '/sync_model/v1': { model_id: '3f2a9c1e', server_id: 'any' },
  '/train_model/v1': {
    model_name: 'my-face',
    base_model: 'sd1.5',
    max_train_steps: 200,
    validation_prompt: 'a photo of sks person',
    instance_prompt: 'sks person',
    images: [img('me-1'), img('me-2')],
    description: 'Me',
    visibility: 'private',
  },
};
