import { objectInfoWithPacks } from '@imagegen/comfyui-fake';
import { compileRequestValidator, endpointByPath } from '@imagegen/contract';
import { CONTROLNET_FILES } from '../src/chains/controlnet-stack.ts';
import { FACE_RESTORER, FACE_SWAP_MODEL } from '../src/chains/face-swap.ts';
import { IP_ADAPTER_FILES } from '../src/chains/ip-adapter.ts';
import { FACEID_FILES } from '../src/compilers/facelock-v1.ts';
import { PULID_MODEL } from '../src/compilers/facelock-v2.ts';
import { compilerFor } from '../src/compilers/index.ts';
import { INSTAMODEL_CHECKPOINT, INSTANTID_FILES } from '../src/compilers/instamodel.ts';
import { IC_LIGHT_UNET } from '../src/compilers/relight.ts';
import type { CompileContext, CompiledWorkflow } from '../src/contracts.ts';
import { ALL_NODE_PACKS } from '../src/node-packs.ts';
import { objectInfoWithFiles } from './object-info-with-files.ts';

/** An image URL of a request; the test server stores its upload under the URL's last segment. */
export const url = (name: string) => `https://images.example/${name}`;

/** The required fields both face-lock pipelines share. */
const FACELOCK = {
  input_face: url('control-0.png'),
  prompt: 'a portrait in a garden',
  negative_prompt: 'blurry',
  num_inference_steps: 20,
  samples: 1,
  guidance_scale: 5,
};

/** Requests each pipeline takes with nothing but its required fields. */
export const MINIMAL_REQUESTS: Readonly<Record<string, Record<string, unknown>>> = {
  '/sd/text2image/v1': { prompt: 'a lighthouse at dusk', negative_prompt: 'blurry' },
  '/sd/image2image/v1': {
    prompt: 'a lighthouse at dusk',
    negative_prompt: 'blurry',
    init_image: url('init.png'),
  },
  '/sd/inpainting/v1': {
    prompt: 'a red door',
    negative_prompt: 'blurry',
    init_image: url('init.png'),
    mask_image: url('mask.png'),
  },
  '/sd/controlnet/v1': { prompt: 'a house', negative_prompt: 'blurry', init_images: [url('control-0.png')] },
  '/sdxl/text2image/v1': { prompt: 'a lighthouse at dusk', negative_prompt: 'blurry' },
  '/sdxl/image2image/v1': {
    prompt: 'a lighthouse at dusk',
    negative_prompt: 'blurry',
    init_image: url('init.png'),
  },
  '/sdxl/inpainting/v1': {
    prompt: 'a red door',
    negative_prompt: 'blurry',
    init_image: url('init.png'),
    mask_image: url('mask.png'),
  },
  '/sdxl/controlnet/v1': {
    prompt: 'a house',
    negative_prompt: 'blurry',
    init_images: [url('control-0.png')],
  },
  '/generate/v1': { prompt: 'a lighthouse at dusk' },
  '/generate/v2': { prompt: 'a lighthouse at dusk' },
  '/generate/v3': { prompt: 'a lighthouse at dusk' },
  '/sd3/v1': {
    prompt: 'a lighthouse',
    negative_prompt: 'blurry',
    num_inference_steps: 28,
    samples: 1,
    guidance_scale: 4.5,
  },
  '/sd3_5/v1': {
    prompt: 'a lighthouse',
    negative_prompt: 'blurry',
    num_inference_steps: 28,
    samples: 1,
    guidance_scale: 4.5,
  },
  '/outpainting/v1': {
    prompt: 'more beach',
    init_image: url('init.png'),
    num_inference_steps: 20,
    guidance_scale: 7,
    direction: ['left'],
  },
  '/upscaler/v1': { input_image: url('init.png'), prompt: 'crisp detail' },
  '/faceswap/v1': { input_face: url('control-0.png'), input_image: url('init.png') },
  '/facelock/v2': { ...FACELOCK, model_id: 'sdxl' },
  '/facelock/v1': { ...FACELOCK, model_id: 'sd1.5' },
  '/instamodel/v1': {
    input_face: url('control-0.png'),
    prompt: 'a portrait in a garden',
    negative_prompt: 'blurry',
  },
  '/photomaker/v1': {
    prompt: 'a photo of a man img in a garden',
    negative_prompt: 'blurry',
    init_images: [url('control-0.png'), url('control-1.png')],
    num_inference_steps: 10,
    samples: 1,
    start_merge_step: 3,
    guidance_scale: 5,
  },
  '/relight/v1': { init_image: url('init.png'), prompt: 'warm sunset light', samples: 1 },
  '/bgchanger/v1': { init_image: url('init.png'), prompt: 'a beach at noon', negative_prompt: 'blurry' },
  '/logo/v1': { prompt: 'a coffee shop logo, flat vector', image: url('control-0.png') },
  '/fashion_upper/v1': {
    cloth_image: url('control-0.png'),
    model_image: url('init.png'),
    num_inference_steps: 20,
    guidance_scale: 2.5,
    samples: 1,
  },
  '/fashion_lower/v1': {
    cloth_image: url('control-0.png'),
    model_image: url('init.png'),
    num_inference_steps: 20,
    guidance_scale: 2.5,
    samples: 1,
  },
  '/fashion_dress/v1': {
    cloth_image: url('control-0.png'),
    model_image: url('init.png'),
    num_inference_steps: 20,
    guidance_scale: 2.5,
    samples: 1,
  },
  '/modelswitch/v1': { input_image: url('init.png'), prompt: 'a tall woman with short red hair' },
  '/inpaint_anything/v1': {
    input_image: url('init.png'),
    prompt: 'a vase of flowers',
    input_coords: [40, 60],
  },
  '/image2prompt/v1': { input_image: url('init.png') },
  '/superresolution/v1': {
    model_name: 'RealESRGAN_x4plus',
    init_image: url('init.png'),
    scale_factor: 2,
    tile: 128,
  },
  '/train_model/v1': {
    model_name: 'my face',
    base_model: 'sd1.5',
    max_train_steps: 10,
    validation_prompt: 'a photo of sks person at the beach',
    instance_prompt: 'a photo of sks person',
    images: [url('control-0.png'), url('control-1.png'), url('init.png')],
    description: '',
    visibility: 'private',
  },
};

/** The LoRA, embedding and picture files the test requests name, beside the usual model files. */
export const TEST_LORAS = ['detail-tweaker.safetensors', 'film-grain.safetensors'];
export const UPLOADS = ['init.png', 'mask.png', 'control-0.png', 'control-1.png'];

/** The LCM LoRAs LCMScheduler samples with (COMFYUI_CHECKPOINTS' `lcm` roles), as the equipped server lists them. */
export const LCM_LORAS: Readonly<Record<string, string>> = {
  'sd1.5:lcm': 'lcm-lora-sdv1-5.safetensors',
  'sdxl:lcm': 'lcm-lora-sdxl.safetensors',
};

/**
 * The recorded object_info, with every node pack's definitions, and the files a fully equipped
 * server would list in its COMBO lists.
 * The recorded server held only `random-sd15.safetensors` and a tiny upscaler; TripleCLIPLoader,
 * UpscaleModelLoader and PhotoMakerLoader declare their file inputs as plain COMBO (newer node API), which ComfyUI
 * does not check against a list, so they need no additions.
 */
export const equippedServer = objectInfoWithFiles(
  {
    CheckpointLoaderSimple: {
      ckpt_name: [
        'v1-5-pruned-emaonly.safetensors',
        'sd_xl_base_1.0.safetensors',
        'sd3_medium.safetensors',
        'sd3.5_large.safetensors',
        INSTAMODEL_CHECKPOINT.file,
      ],
    },
    LoraLoader: { lora_name: [...TEST_LORAS, ...Object.values(LCM_LORAS)] },
    LoraLoaderModelOnly: { lora_name: [...TEST_LORAS, FACEID_FILES.lora] },
    ControlNetLoader: {
      control_net_name: [
        ...Object.values(CONTROLNET_FILES).flatMap((files) => Object.values(files)),
        INSTANTID_FILES.controlnet,
      ],
    },
    InstantIDModelLoader: { instantid_file: [INSTANTID_FILES.adapter] },
    UNETLoader: { unet_name: ['flux1-schnell.safetensors', 'flux1-dev.safetensors'] },
    DualCLIPLoader: { clip_name1: ['t5xxl_fp16.safetensors'], clip_name2: ['clip_l.safetensors'] },
    VAELoader: { vae_name: ['ae.safetensors'] },
    LoadImage: { image: UPLOADS },
    ReActorFaceSwap: { swap_model: [FACE_SWAP_MODEL], face_restore_model: [FACE_RESTORER] },
    ReActorRestoreFace: { model: [FACE_RESTORER] },
    PulidModelLoader: { pulid_file: [PULID_MODEL] },
    LoadAndApplyICLightUnet: { model_path: [IC_LIGHT_UNET] },
    IPAdapterModelLoader: {
      ipadapter_file: [
        ...Object.values(IP_ADAPTER_FILES).map((adapter) => adapter.file),
        FACEID_FILES.adapter,
      ],
    },
    CLIPVisionLoader: { clip_name: Object.values(IP_ADAPTER_FILES).map((adapter) => adapter.clipVision) },
  },
  objectInfoWithPacks(ALL_NODE_PACKS),
);

/** The JSON Schema of each field of a pipeline's request. */
export function requestProperties<S>(pipeline: string): Record<string, S> {
  const request = endpointByPath(pipeline)?.request as { properties?: Record<string, S> } | undefined;
  if (!request?.properties) throw new Error(`${pipeline} has no request schema in the contract`);
  return request.properties;
}

/** The request as the contract hands it to an engine: validated, defaults filled in. */
export function validatedRequest(pipeline: string, body: Record<string, unknown>): Record<string, unknown> {
  const endpoint = endpointByPath(pipeline);
  if (!endpoint) throw new Error(`${pipeline} is not in the contract`);
  const result = compileRequestValidator(endpoint)(structuredClone(body));
  if (!result.ok) throw new Error(`${pipeline} refuses the test request: ${JSON.stringify(result.detail)}`);
  return result.value;
}

/** The images of a request as uploaded: each URL stored under its last path segment. */
export function uploadsOf(pipeline: string, input: Record<string, unknown>): CompileContext['images'] {
  const images: Record<string, string | string[]> = {};
  for (const field of endpointByPath(pipeline)?.imageFields ?? []) {
    const value = input[field];
    const name = (u: string) => u.slice(u.lastIndexOf('/') + 1);
    if (typeof value === 'string') images[field] = name(value);
    else if (Array.isArray(value)) images[field] = value.map((u) => name(String(u)));
  }
  return images;
}

export interface CompileOptions {
  readonly seed?: number;
  readonly filenamePrefix?: string;
  readonly checkpoints?: Readonly<Record<string, string>>;
  readonly families?: CompileContext['families'];
  readonly imageSizes?: CompileContext['imageSizes'];
  readonly submission?: string;
  readonly device?: string;
  /** The owner's models the request names by id, as the worker resolves them. */
  readonly models?: CompileContext['models'];
}

/** Compiles a request body (minimal request + `extra`) the way the engine will. */
export function compileRequest(
  pipeline: string,
  extra: Record<string, unknown> = {},
  options: CompileOptions = {},
): CompiledWorkflow {
  const compiler = compilerFor(pipeline);
  if (!compiler) throw new Error(`no compiler for ${pipeline}`);
  const input = validatedRequest(pipeline, { ...MINIMAL_REQUESTS[pipeline], ...extra });
  return compiler.compile({
    input,
    seed: options.seed ?? 1234,
    images: uploadsOf(pipeline, input),
    filenamePrefix: options.filenamePrefix ?? 'imagegen/task-1/img',
    checkpoints: options.checkpoints ?? {},
    ...(options.families ? { families: options.families } : {}),
    ...(options.imageSizes ? { imageSizes: options.imageSizes } : {}),
    ...(options.submission ? { submission: options.submission } : {}),
    ...(options.device ? { device: options.device } : {}),
    ...(options.models ? { models: options.models } : {}),
  });
}

/** The nodes of a compiled graph of one class, in id order. */
export function nodesOf(workflow: CompiledWorkflow, classType: string) {
  return Object.entries(workflow.prompt)
    .filter(([, node]) => node.class_type === classType)
    .map(([id, node]) => ({ id, inputs: node.inputs }));
}
