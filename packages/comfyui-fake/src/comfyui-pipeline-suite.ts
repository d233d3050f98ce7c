import { randomBytes } from 'node:crypto';
import { compileRequestValidator, endpointByPath } from '@imagegen/contract';
import { type ApiPrompt, type CompiledWorkflow, compilerFor } from '@imagegen/engine-comfyui/engine';
import { type EngineJob, type InputImage, inMemoryImage, type JobModel } from '@imagegen/engines';
import sharp from 'sharp';
import { MODEL_INPUTS } from './fake-comfyui/model-lists.ts';

/**
 * The pipeline suite of the comfyui engine: one request per pipeline it compiles (and a few more
 * for fields that reshape the graph), each with the images the answer must hold. It runs through
 * the API against the fake ComfyUI in `npm test`, and against a real server with
 * `npm run --silent test:comfyui -- URL`. Sizes and steps are small: a real server on a CPU runs
 * them in minutes.
 */

/** An input picture, drawn at test time. */
export interface Picture {
  readonly width: number;
  readonly height: number;
  /** A photo-like scene, or a mask (white: the part to paint). */
  readonly kind: 'photo' | 'mask';
}

export interface PipelineCase {
  /** The pipeline, and what the case exercises when a pipeline has several. */
  readonly name: string;
  readonly pipeline: string;
  /** The request body without its image fields. */
  readonly body: Readonly<Record<string, unknown>>;
  /** Input pictures by request field (a list for a list field). */
  readonly images: Readonly<Record<string, Picture | readonly Picture[]>>;
  /**
   * The COMFYUI_CHECKPOINTS keys the case needs mapped (`sd1.5:lcm`: LCMScheduler's LoRA); a run
   * whose setting lacks one skips the case, naming it.
   */
  readonly needs?: readonly string[];
  /**
   * The owner's models the body names by model id (an uploaded adapter in `ip_adapter`), as the
   * worker hands them over: each a copy of a model file the server already holds (`copyOf`, in the
   * model's folder), placed under the id's own name in the models folder the server reads.
   */
  readonly ownerModels?: readonly OwnerModel[];
  /**
   * What the answer must hold: this many images of this size, a text where the pipeline
   * describes, a stored model file where it trains (its images are the model's sample images).
   */
  readonly expect: {
    readonly count: number;
    readonly width: number;
    readonly height: number;
    readonly text?: boolean;
    readonly model?: boolean;
    /**
     * The fields the task's notes name, in order: those the model takes no notice of here, as the
     * original's own pipeline took none (absent: the task notes nothing).
     */
    readonly notes?: readonly string[];
  };
}

/** One of the owner's models a case names by id, made from a file the server already holds. */
export interface OwnerModel {
  readonly modelId: string;
  readonly modelType: string;
  readonly baseModel: string;
  /** The folder (`ipadapter`) and the file of the server's own whose copy stands for the model. */
  readonly folder: string;
  readonly copyOf: string;
}

const photo = (width: number, height: number): Picture => ({ width, height, kind: 'photo' });
const mask = (width: number, height: number): Picture => ({ width, height, kind: 'mask' });

const SD = { prompt: 'a red fox in the snow', negative_prompt: 'blurry', num_inference_steps: 2 };

/** The owner's SD1.5 IP-Adapter of the uploaded-adapter case: a copy of the server's ip-adapter_sd15. */
const UPLOADED_ADAPTER: OwnerModel = {
  modelId: '5a17e0c0ffee00000000000000adab7e',
  modelType: 'adapter',
  baseModel: 'sd1.5',
  folder: 'ipadapter',
  copyOf: 'ip-adapter_sd15.safetensors',
};
const SD_SIZE = { width: 128, height: 192 };
const XL_SIZE = { width: 256, height: 192 };
const BIG = {
  prompt: 'a lighthouse at dawn',
  negative_prompt: 'blurry',
  num_inference_steps: 2,
  guidance_scale: 4,
};

export const PIPELINE_SUITE: readonly PipelineCase[] = [
  {
    name: '/sd/text2image/v1',
    pipeline: '/sd/text2image/v1',
    body: { ...SD, ...SD_SIZE, samples: 2 },
    images: {},
    expect: { count: 2, ...SD_SIZE },
  },
  {
    name: '/sd/text2image/v1 with hires, upscale, clip_skip, a LoRA and another scheduler',
    pipeline: '/sd/text2image/v1',
    body: {
      ...SD,
      width: 128,
      height: 128,
      hires: true,
      upscale: '2x',
      clip_skip: 2,
      scheduler: 'DPMSolverMultistepScheduler',
      lora_models: ['detail-tweaker'],
      lora_weights: [0.7],
    },
    images: {},
    expect: { count: 1, width: 384, height: 384 },
  },
  {
    name: '/sd/image2image/v1',
    pipeline: '/sd/image2image/v1',
    body: { ...SD, ...SD_SIZE, strength: 0.6 },
    images: { init_image: photo(160, 120) },
    // The photo's own 4:3 framing over the requested area (128 x 192 px): 181 x 136.
    expect: { count: 1, width: 181, height: 136 },
  },
  {
    name: '/sd/inpainting/v1',
    pipeline: '/sd/inpainting/v1',
    body: { ...SD, ...SD_SIZE },
    images: { init_image: photo(160, 120), mask_image: mask(160, 120) },
    // The painting laid back over the photo, at the photo's own size.
    expect: { count: 1, width: 160, height: 120 },
  },
  {
    name: '/sd/controlnet/v1',
    pipeline: '/sd/controlnet/v1',
    body: { ...SD, ...SD_SIZE, controlnets: ['canny'] },
    images: { init_images: [photo(160, 120)] },
    // The control photo frames the answer, as a photo to start from does.
    expect: { count: 1, width: 181, height: 136 },
  },
  {
    name: '/sd/text2image/v1 with an IP-Adapter, style images and hidiffusion',
    pipeline: '/sd/text2image/v1',
    body: { ...SD, ...SD_SIZE, ip_adapter: ['ip-adapter_sd15'], ip_adapter_scale: [0.6], hidiffusion: true },
    images: { ip_adapter_image: photo(160, 120), ip_adapter_style_images: [photo(96, 96), photo(64, 80)] },
    expect: { count: 1, ...SD_SIZE },
  },
  {
    name: '/sd/controlnet/v1 with openpose and depth',
    pipeline: '/sd/controlnet/v1',
    body: { ...SD, ...SD_SIZE, controlnets: ['openpose', 'depth'], resolution: 256 },
    images: { init_images: [photo(160, 120)] },
    expect: { count: 1, width: 181, height: 136 },
  },
  {
    // A controlnet on a mode that starts from a picture: its own control_image, and hires at the
    // picture's strength.
    name: '/sd/image2image/v1 with a canny control_image and hires',
    pipeline: '/sd/image2image/v1',
    body: { ...SD, ...SD_SIZE, strength: 0.6, controlnets: ['canny'], hires: true },
    images: { init_image: photo(160, 120), control_image: photo(160, 120) },
    // The photo's framing (181x136), then hires' 1.5 times.
    expect: { count: 1, width: 272, height: 204 },
  },
  {
    // The controlnet's conditioning under the inpainting conditioning, and upscale after the decode.
    name: '/sd/inpainting/v1 with a canny control_image and upscale',
    pipeline: '/sd/inpainting/v1',
    body: { ...SD, ...SD_SIZE, controlnets: ['canny'], upscale: '2x' },
    images: { init_image: photo(160, 120), mask_image: mask(160, 120), control_image: photo(160, 120) },
    // The photo's own size, upscaled twice.
    expect: { count: 1, width: 320, height: 240 },
  },
  {
    name: '/sdxl/text2image/v1',
    pipeline: '/sdxl/text2image/v1',
    body: { ...SD, ...XL_SIZE, samples: 2 },
    images: {},
    expect: { count: 2, ...XL_SIZE },
  },
  {
    name: '/sdxl/text2image/v1 with two masked IP-Adapters',
    pipeline: '/sdxl/text2image/v1',
    body: {
      ...SD,
      ...XL_SIZE,
      ip_adapter: ['ip-adapter_sdxl_vit-h', 'ip-adapter-plus-face_sdxl_vit-h'],
      ip_adapter_scale: [0.7, 0.4],
    },
    images: {
      ip_adapter_image: [photo(160, 120), photo(120, 160)],
      ip_adapter_mask_images: [mask(256, 192), mask(256, 192)],
    },
    expect: { count: 1, ...XL_SIZE },
  },
  {
    name: '/sdxl/image2image/v1',
    pipeline: '/sdxl/image2image/v1',
    body: { ...SD, ...XL_SIZE },
    images: { init_image: photo(160, 120) },
    expect: { count: 1, ...XL_SIZE },
  },
  {
    name: '/sdxl/inpainting/v1',
    pipeline: '/sdxl/inpainting/v1',
    body: { ...SD, ...XL_SIZE },
    images: { init_image: photo(160, 120), mask_image: mask(160, 120) },
    expect: { count: 1, width: 160, height: 120 },
  },
  {
    name: '/sdxl/controlnet/v1',
    pipeline: '/sdxl/controlnet/v1',
    body: { ...SD, ...XL_SIZE, controlnets: ['canny'] },
    images: { init_images: [photo(160, 120)] },
    expect: { count: 1, ...XL_SIZE },
  },
  {
    // SDXL's own clip_skip (past its penultimate layer), LoRA, HiDiffusion patch and hires pass.
    name: '/sdxl/text2image/v1 with hires, clip_skip, a LoRA, hidiffusion and another scheduler',
    pipeline: '/sdxl/text2image/v1',
    body: {
      ...SD,
      ...XL_SIZE,
      hires: true,
      clip_skip: 3,
      lora_models: ['random-lora-sdxl'],
      lora_weights: [0.8],
      hidiffusion: true,
      scheduler: 'DPMSolverMultistepScheduler',
    },
    images: {},
    expect: { count: 1, width: 384, height: 288 },
  },
  {
    // A role id as model_id: the Lightning checkpoint with its own 8 steps, cfg 1 and schedule,
    // near SDXL's megapixel.
    name: '/sdxl/text2image/v1 with the Lightning checkpoint as model_id',
    pipeline: '/sdxl/text2image/v1',
    body: {
      prompt: 'a red fox in the snow',
      negative_prompt: 'blurry',
      model_id: 'sdxl-lightning',
      ...XL_SIZE,
    },
    images: {},
    expect: { count: 1, ...XL_SIZE },
  },
  {
    // A model of the other family on the path: drawn at SD1.5's own size with its own adapters.
    name: '/sdxl/image2image/v1 with an SD1.5 model_id',
    pipeline: '/sdxl/image2image/v1',
    body: { ...SD, ...XL_SIZE, model_id: 'sd1.5', strength: 0.6 },
    images: { init_image: photo(160, 120) },
    expect: { count: 1, ...XL_SIZE },
  },
  {
    // LCMScheduler: the LCM LoRA (a random SD1.5 LoRA stands for it), ModelSamplingDiscrete lcm,
    // the lcm sampler at its own steps and cfg.
    name: '/sd/text2image/v1 with LCMScheduler',
    pipeline: '/sd/text2image/v1',
    body: {
      prompt: 'a red fox in the snow',
      negative_prompt: 'blurry',
      scheduler: 'LCMScheduler',
      ...SD_SIZE,
    },
    images: {},
    needs: ['sd1.5:lcm'],
    expect: { count: 1, ...SD_SIZE },
  },
  {
    // hires below the latent upscale's working strength: the second pass enlarges in pixel space
    // with ESRGAN, at the picture's own strength.
    name: '/sd/image2image/v1 with hires at a low strength',
    pipeline: '/sd/image2image/v1',
    body: { ...SD, width: 160, height: 120, strength: 0.3, hires: true },
    images: { init_image: photo(160, 120) },
    expect: { count: 1, width: 240, height: 180 },
  },
  {
    // Past SD1.5's one-pass range: its own 512 px first, then a second pass at the size asked.
    name: '/sd/text2image/v1 at a size past one pass',
    pipeline: '/sd/text2image/v1',
    body: { ...SD, width: 768, height: 768 },
    images: {},
    expect: { count: 1, width: 768, height: 768 },
  },
  {
    // Style alignment (style_aligned_comfy): the second picture takes the first one's style.
    name: '/sd/text2image/v1 with style alignment (attn, adain, style)',
    pipeline: '/sd/text2image/v1',
    body: { ...SD, ...SD_SIZE, samples: 2, attn: true, adain: true, style: 0.8 },
    images: {},
    expect: { count: 2, ...SD_SIZE },
  },
  {
    name: '/sdxl/text2image/v1 with style alignment (attn, adain, style)',
    pipeline: '/sdxl/text2image/v1',
    body: { ...SD, ...XL_SIZE, samples: 2, attn: true, style: 0.5 },
    images: {},
    expect: { count: 2, ...XL_SIZE },
  },
  {
    // Masked controlnet inpainting: the control photo repainted under its masks (joined), the
    // painting laid back over the photo at its own size.
    name: '/sd/controlnet/v1 with mask_images',
    pipeline: '/sd/controlnet/v1',
    body: { ...SD, ...SD_SIZE, controlnets: ['canny'], strength: 0.9 },
    images: { init_images: [photo(160, 120)], mask_images: [mask(160, 120), mask(80, 60)] },
    expect: { count: 1, width: 160, height: 120 },
  },
  {
    // An uploaded adapter: the owner's model by id, loaded from the ipadapter folder.
    name: '/sd/text2image/v1 with an uploaded adapter in ip_adapter',
    pipeline: '/sd/text2image/v1',
    body: { ...SD, ...SD_SIZE, ip_adapter: [UPLOADED_ADAPTER.modelId], ip_adapter_scale: [0.5] },
    images: { ip_adapter_image: photo(160, 120) },
    ownerModels: [UPLOADED_ADAPTER],
    expect: { count: 1, ...SD_SIZE },
  },
  {
    name: '/generate/v1',
    pipeline: '/generate/v1',
    body: { ...SD, ...SD_SIZE, samples: 2, style: 'fantasy_art' },
    images: {},
    expect: { count: 2, ...SD_SIZE },
  },
  {
    name: '/generate/v2',
    pipeline: '/generate/v2',
    body: { ...SD, ...XL_SIZE, samples: 2 },
    images: {},
    expect: { count: 2, ...XL_SIZE },
  },
  {
    name: '/generate/v3',
    pipeline: '/generate/v3',
    body: { prompt: 'a lighthouse at dawn', num_inference_steps: 2, samples: 1, ...XL_SIZE },
    images: {},
    expect: { count: 1, ...XL_SIZE },
  },
  // Flux from a picture, and Flux inpainting (the prompt is /generate/v3's: a server that keeps
  // its cache encodes it once).
  {
    name: '/generate/v3 image2image',
    pipeline: '/generate/v3',
    body: { prompt: 'a lighthouse at dawn', num_inference_steps: 2, samples: 1, strength: 0.7, ...XL_SIZE },
    images: { init_image: photo(160, 120) },
    expect: { count: 1, ...XL_SIZE },
  },
  {
    // The palette's colours (the empty slots the original's frontend pads with left out), a
    // guidance Schnell takes no notice of, and strength without a picture: drawn, and noted.
    name: '/generate/v3 with a palette, guidance and strength',
    pipeline: '/generate/v3',
    body: {
      prompt: 'a lighthouse at dawn',
      num_inference_steps: 2,
      samples: 1,
      palette: ['#006400', '#ffd700', '', '', ''],
      guidance_scale: 3.5,
      strength: 0.5,
      ...XL_SIZE,
    },
    images: {},
    expect: { count: 1, ...XL_SIZE, notes: ['strength', 'guidance_scale'] },
  },
  {
    name: '/generate/v3 inpainting',
    pipeline: '/generate/v3',
    body: { prompt: 'a lighthouse at dawn', num_inference_steps: 2, samples: 1, ...XL_SIZE },
    images: { init_image: photo(160, 120), mask_image: mask(160, 120) },
    // The painting laid back over the photo, at the photo's own size.
    expect: { count: 1, width: 160, height: 120 },
  },
  {
    name: '/sd3/v1',
    pipeline: '/sd3/v1',
    body: { ...BIG, samples: 1, ...XL_SIZE },
    images: {},
    expect: { count: 1, ...XL_SIZE },
  },
  {
    name: '/sd3_5/v1',
    pipeline: '/sd3_5/v1',
    body: { ...BIG, samples: 1, ...XL_SIZE },
    images: {},
    expect: { count: 1, ...XL_SIZE },
  },
  {
    name: '/outpainting/v1',
    pipeline: '/outpainting/v1',
    body: {
      prompt: 'a wider view',
      num_inference_steps: 2,
      guidance_scale: 7,
      direction: ['right', 'down'],
      expansion: [64],
      // The new border is sampled fully whatever the strength; it blends 20 px into the photo.
      strength: 0.5,
    },
    images: { init_image: photo(128, 96) },
    expect: { count: 1, width: 192, height: 160 },
  },
  {
    // The fine-tuning fields of the original's page: the blend band, stretching before padding,
    // and tiles (two across the grown 1088 x 544 canvas, each sampled at SDXL's smallest area).
    name: '/outpainting/v1 with overlap, stretching and tiles',
    pipeline: '/outpainting/v1',
    body: {
      prompt: 'a wider view',
      num_inference_steps: 2,
      guidance_scale: 7,
      direction: ['right', 'left', 'down'],
      expansion: [64],
      strength: 0.7,
      overlap: 0.02,
      stretch_area: 0.3,
      stretch_scale: 2,
      horizontal_tile: 2,
      vertical_tile: 1,
      resolution: 256,
    },
    images: { init_image: photo(960, 480) },
    expect: { count: 1, width: 1088, height: 544 },
  },
  {
    name: '/upscaler/v1 deblur',
    pipeline: '/upscaler/v1',
    body: { prompt: 'sharp', type: 'deblur' },
    images: { input_image: photo(96, 64) },
    expect: { count: 1, width: 192, height: 128 },
  },
  {
    name: '/upscaler/v1 variation',
    pipeline: '/upscaler/v1',
    body: { prompt: 'more detail', type: 'variation' },
    images: { input_image: photo(96, 64) },
    expect: { count: 1, width: 192, height: 128 },
  },
  {
    name: '/superresolution/v1',
    pipeline: '/superresolution/v1',
    body: { model_name: 'RealESRGAN_x4plus', scale_factor: 2, tile: 128 },
    images: { init_image: photo(96, 64) },
    expect: { count: 1, width: 192, height: 128 },
  },
  {
    // Real-ESRGAN's face_enhance: the enlarged picture's faces restored with GFPGAN (ReActor's node).
    name: '/superresolution/v1 with face_enhance',
    pipeline: '/superresolution/v1',
    body: { model_name: 'RealESRGAN_x4plus', scale_factor: 2, tile: 128, face_enhance: true },
    images: { init_image: photo(96, 64) },
    expect: { count: 1, width: 192, height: 128 },
  },
  {
    // At the model's own scale: its output as it is, no resize after it.
    name: '/superresolution/v1 at the native scale of the model',
    pipeline: '/superresolution/v1',
    body: { model_name: 'RealESRGAN_x2plus', scale_factor: 2, tile: 128 },
    images: { init_image: photo(96, 64) },
    expect: { count: 1, width: 192, height: 128 },
  },
  {
    name: '/faceswap/v1',
    pipeline: '/faceswap/v1',
    body: {},
    images: { input_image: photo(160, 120), input_face: photo(96, 96) },
    expect: { count: 1, width: 160, height: 120 },
  },
  {
    name: '/facelock/v2',
    pipeline: '/facelock/v2',
    body: { ...SD, ...XL_SIZE, model_id: 'sdxl', samples: 2, guidance_scale: 5, id_scale: 0.7 },
    images: { input_face: photo(96, 96) },
    expect: { count: 2, ...XL_SIZE },
  },
  {
    name: '/facelock/v1',
    pipeline: '/facelock/v1',
    body: { ...SD, ...SD_SIZE, model_id: 'sd1.5', samples: 2, guidance_scale: 5, id_scale: 0.7 },
    images: { input_face: photo(96, 96) },
    expect: { count: 2, ...SD_SIZE },
  },
  {
    name: '/facelock/v1 with a second face mixed in',
    pipeline: '/facelock/v1',
    body: { ...SD, ...SD_SIZE, model_id: 'sd1.5', samples: 1, guidance_scale: 5, id_mix: true },
    images: { input_face: photo(96, 96), supp_image1: photo(80, 96) },
    expect: { count: 1, ...SD_SIZE },
  },
  {
    name: '/instamodel/v1',
    pipeline: '/instamodel/v1',
    body: { prompt: 'a portrait in a garden', negative_prompt: 'blurry', num_inference_steps: 2, ...XL_SIZE },
    images: { input_face: photo(96, 96) },
    expect: { count: 1, ...XL_SIZE },
  },
  {
    name: '/photomaker/v1',
    pipeline: '/photomaker/v1',
    body: {
      prompt: 'a photo of a man img in a garden',
      negative_prompt: 'blurry',
      num_inference_steps: 4,
      start_merge_step: 1,
      samples: 2,
      guidance_scale: 5,
      ...XL_SIZE,
    },
    images: { init_images: [photo(96, 96), photo(96, 96)] },
    expect: { count: 2, ...XL_SIZE },
  },
  {
    name: '/relight/v1',
    pipeline: '/relight/v1',
    body: { prompt: 'warm sunset light', samples: 2, light: 'right', ...SD_SIZE },
    images: { init_image: photo(160, 120) },
    // The photo's own framing over the requested area, never cropped to it.
    expect: { count: 2, width: 181, height: 136 },
  },
  {
    name: '/bgchanger/v1 with a style image',
    pipeline: '/bgchanger/v1',
    body: { prompt: 'a beach at noon', negative_prompt: 'blurry' },
    images: { init_image: photo(160, 120), style_image: photo(96, 96) },
    expect: { count: 1, width: 160, height: 120 },
  },
  {
    name: '/logo/v1',
    pipeline: '/logo/v1',
    body: { prompt: 'a coffee shop logo, flat vector', ...XL_SIZE },
    images: { image: photo(128, 128) },
    // The sketch frames the answer: square, over the requested area.
    expect: { count: 1, width: 222, height: 222 },
  },
  {
    name: '/logo/v1 with logo_prompt',
    pipeline: '/logo/v1',
    body: { prompt: 'flat vector, two colours', logo_prompt: 'a coffee cup with the word BEAN', ...XL_SIZE },
    images: { image: photo(128, 128) },
    expect: { count: 1, width: 222, height: 222 },
  },
  ...(['/fashion_upper/v1', '/fashion_lower/v1', '/fashion_dress/v1'] as const).map((pipeline, n) => ({
    name: pipeline,
    pipeline,
    body: { num_inference_steps: 2, guidance_scale: 2.5, samples: n + 1 },
    images: { model_image: photo(120, 160), cloth_image: photo(96, 96) },
    expect: { count: n + 1, width: 120, height: 160 },
  })),
  {
    name: '/modelswitch/v1 with a face',
    pipeline: '/modelswitch/v1',
    body: { prompt: 'a tall woman with short red hair' },
    images: { input_image: photo(120, 160), input_face: photo(96, 96) },
    expect: { count: 1, width: 120, height: 160 },
  },
  ...(['fill', 'replace', 'remove'] as const).map((operation) => ({
    name: `/inpaint_anything/v1 ${operation}`,
    pipeline: '/inpaint_anything/v1',
    body: { prompt: operation === 'remove' ? '' : 'a vase of flowers', operation, input_coords: [40, 60] },
    images: { input_image: photo(160, 120) },
    expect: { count: 1, width: 160, height: 120 },
  })),
  {
    name: '/image2prompt/v1',
    pipeline: '/image2prompt/v1',
    body: {},
    images: { input_image: photo(160, 120) },
    expect: { count: 0, width: 0, height: 0, text: true },
  },
  {
    // The smallest photo's shorter side (64) is the training size, and the sample's.
    name: '/train_model/v1',
    pipeline: '/train_model/v1',
    body: {
      model_name: 'suite lighthouse',
      base_model: 'sd1.5',
      max_train_steps: 2,
      instance_prompt: 'a photo of sks lighthouse',
      validation_prompt: 'a photo of sks lighthouse at night',
      description: 'trained by the pipeline suite',
      visibility: 'private',
    },
    images: { images: [photo(64, 64), photo(96, 72)] },
    expect: { count: 1, width: 64, height: 64, model: true },
  },
];

/** A picture as PNG bytes: a lit scene with a few shapes, or a white ellipse on black. */
export async function drawPicture(picture: Picture): Promise<Buffer> {
  const { width, height } = picture;
  const svg =
    picture.kind === 'mask'
      ? `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
           <rect width="100%" height="100%" fill="black"/>
           <ellipse cx="${width / 2}" cy="${height / 2}" rx="${width / 4}" ry="${height / 4}" fill="white"/>
         </svg>`
      : `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
           <defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1">
             <stop offset="0" stop-color="#8ec5ff"/><stop offset="1" stop-color="#f7d9a8"/>
           </linearGradient></defs>
           <rect width="100%" height="100%" fill="url(#sky)"/>
           <circle cx="${width * 0.7}" cy="${height * 0.3}" r="${height / 8}" fill="#ffe066"/>
           <rect x="${width * 0.15}" y="${height * 0.45}" width="${width * 0.3}" height="${height * 0.45}" fill="#6b4f3a"/>
           <rect y="${height * 0.85}" width="100%" height="${height * 0.15}" fill="#3f7d3a"/>
         </svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/**
 * The engine job of a case, as the worker would hand it over: the body validated by the contract
 * (defaults filled in), with `imageUrl(field, n)` standing for each image's URL, and the pictures.
 */
export async function caseJob(
  testCase: PipelineCase,
  imageUrl: (field: string, n?: number) => string = (field, n) =>
    `https://suite.example/${field}${n === undefined ? '' : `-${n}`}.png`,
): Promise<EngineJob> {
  const endpoint = endpointByPath(testCase.pipeline);
  if (!endpoint) throw new Error(`${testCase.pipeline} is not an endpoint of the contract`);
  const body: Record<string, unknown> = { ...testCase.body };
  const images: Record<string, InputImage | InputImage[]> = {};
  for (const [field, value] of Object.entries(testCase.images)) {
    const one = async (picture: Picture, n?: number): Promise<InputImage> =>
      inMemoryImage(await drawPicture(picture), {
        contentType: 'image/png',
        width: picture.width,
        height: picture.height,
        url: imageUrl(field, n),
      });
    if (Array.isArray(value)) {
      images[field] = await Promise.all((value as Picture[]).map((picture, n) => one(picture, n)));
      body[field] = (images[field] as InputImage[]).map((image) => image.url);
    } else {
      images[field] = await one(value as Picture);
      body[field] = (images[field] as InputImage).url;
    }
  }
  const validated = compileRequestValidator(endpoint)(body);
  if (!validated.ok)
    throw new Error(`${testCase.name}: the contract refuses the body: ${JSON.stringify(validated.detail)}`);
  // A training makes a model: the worker hands over the row its submission registered.
  const trained: JobModel | undefined =
    endpoint.kind === 'training'
      ? {
          modelId: randomBytes(16).toString('hex'),
          modelType: 'lora',
          baseModel: String(validated.value.base_model),
          extension: 'safetensors',
          url: null,
        }
      : undefined;
  const models: Record<string, JobModel> = Object.fromEntries(
    (testCase.ownerModels ?? []).map((model) => [model.modelId, ownerJobModel(model)]),
  );
  if (trained) models[trained.modelId] = trained;
  return {
    pipeline: testCase.pipeline,
    input: validated.value,
    images,
    seed: 1,
    ...(Object.keys(models).length > 0 ? { models } : {}),
  };
}

/** An owner's model of a case as the worker hands it to the engine (its file is `<id>.safetensors`). */
export function ownerJobModel(model: OwnerModel): JobModel {
  return {
    modelId: model.modelId,
    modelType: model.modelType,
    baseModel: model.baseModel,
    extension: 'safetensors',
    url: null,
  };
}

/**
 * What the engine knows of a submission besides the job: the names the server gave the uploads,
 * the submission's id and the server's device.
 */
export interface CaseSubmission {
  readonly images?: Readonly<Record<string, string | readonly string[]>>;
  readonly submission?: string;
  readonly device?: string;
}

/** A case's graph as the engine compiles it, its input images named as on upload. */
export function compileCase(
  testCase: PipelineCase,
  job: EngineJob,
  checkpoints: Readonly<Record<string, string>>,
  submitted: CaseSubmission = {},
): CompiledWorkflow {
  const images =
    submitted.images ??
    Object.fromEntries(
      Object.entries(job.images).map(([field, value]) => [
        field,
        Array.isArray(value) ? value.map((_, n) => `${field}-${n}.png`) : `${field}.png`,
      ]),
    );
  const imageSizes = Object.fromEntries(
    Object.entries(job.images).map(([field, value]) => [
      field,
      Array.isArray(value)
        ? value.map(({ width, height }) => ({ width, height }))
        : { width: (value as InputImage).width, height: (value as InputImage).height },
    ]),
  );
  return compilerFor(testCase.pipeline)!.compile({
    input: job.input,
    seed: job.seed,
    images,
    imageSizes,
    filenamePrefix: 'imagegen/suite/img',
    ...(submitted.submission ? { submission: submitted.submission } : {}),
    ...(submitted.device ? { device: submitted.device } : {}),
    checkpoints,
    // A training's own model is what it makes, not one its graph loads (the engine hands it none).
    ...(testCase.ownerModels && job.models ? { models: job.models } : {}),
  });
}

/** A model file a node of a graph loads: the node's class, its input, the model folder and the file. */
export interface ModelInput {
  readonly classType: string;
  readonly input: string;
  readonly folder: string;
  readonly file: string;
}

/** The model files the nodes of a compiled graph load, one entry per node input. */
export function modelInputsOf(prompt: ApiPrompt): ModelInput[] {
  const loads: ModelInput[] = [];
  for (const node of Object.values(prompt)) {
    for (const [input, folder] of Object.entries(MODEL_INPUTS[node.class_type] ?? {})) {
      const value = node.inputs[input];
      // "No model" in a model list is not a file: packs offer "none" (ReActor's face restorer),
      // TrainLoraNode "[None]" (no LoRA to train further).
      if (typeof value === 'string' && value !== 'none' && value !== '[None]')
        loads.push({ classType: node.class_type, input, folder, file: value });
    }
  }
  return loads;
}

/** The model files a compiled graph loads, by model folder (what a server must hold to run it). */
export function modelFilesOf(prompt: ApiPrompt): Record<string, string[]> {
  const files = new FolderFiles();
  for (const { folder, file } of modelInputsOf(prompt)) files.add(folder, file);
  return files.sorted();
}

/** The COMFYUI_CHECKPOINTS keys a case needs that these mappings lack. */
export function unmetNeeds(testCase: PipelineCase, checkpoints: Readonly<Record<string, string>>): string[] {
  return (testCase.needs ?? []).filter((key) => !Object.hasOwn(checkpoints, key));
}

/** Every model file the suite's graphs load with these checkpoint mappings, by folder. */
export async function suiteModelFiles(
  checkpoints: Readonly<Record<string, string>>,
): Promise<Record<string, string[]>> {
  const all = new FolderFiles();
  for (const testCase of PIPELINE_SUITE) {
    if (unmetNeeds(testCase, checkpoints).length > 0) continue;
    const { prompt } = compileCase(testCase, await caseJob(testCase), checkpoints);
    for (const [folder, files] of Object.entries(modelFilesOf(prompt))) {
      for (const file of files) all.add(folder, file);
    }
  }
  return all.sorted();
}

class FolderFiles {
  private readonly folders = new Map<string, Set<string>>();
  add(folder: string, file: string): void {
    const files = this.folders.get(folder) ?? new Set<string>();
    files.add(file);
    this.folders.set(folder, files);
  }
  sorted(): Record<string, string[]> {
    return Object.fromEntries([...this.folders].map(([folder, files]) => [folder, [...files].sort()]));
  }
}
