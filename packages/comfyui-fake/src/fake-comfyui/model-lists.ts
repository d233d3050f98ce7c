import {
  ALL_NODE_PACKS,
  type InputSpec,
  type NodeDefinition,
  type ObjectInfo,
} from '@imagegen/engine-comfyui/engine';
import { packDefinitions } from './captures.ts';

/**
 * ComfyUI lists a model folder's files as the allowed values of the loaders' inputs
 * (`CheckpointLoaderSimple.ckpt_name` lists `checkpoints/`). The fake keeps the recorded node
 * definitions and rewrites these lists from the files it is given, so validation accepts exactly
 * the models the fake "has".
 */

/** Loader input → model folder, for the core loaders. */
const CORE_MODEL_INPUTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  CheckpointLoader: { ckpt_name: 'checkpoints' },
  CheckpointLoaderSimple: { ckpt_name: 'checkpoints' },
  ImageOnlyCheckpointLoader: { ckpt_name: 'checkpoints' },
  unCLIPCheckpointLoader: { ckpt_name: 'checkpoints' },
  CreateHookModelAsLora: { ckpt_name: 'checkpoints' },
  CreateHookModelAsLoraModelOnly: { ckpt_name: 'checkpoints' },
  LoraLoader: { lora_name: 'loras' },
  LoraLoaderModelOnly: { lora_name: 'loras' },
  // A LoRA to train further, or `[None]`.
  TrainLoraNode: { existing_lora: 'loras' },
  CreateHookLora: { lora_name: 'loras' },
  CreateHookLoraModelOnly: { lora_name: 'loras' },
  VAELoader: { vae_name: 'vae' },
  ControlNetLoader: { control_net_name: 'controlnet' },
  DiffControlNetLoader: { control_net_name: 'controlnet' },
  UpscaleModelLoader: { model_name: 'upscale_models' },
  UNETLoader: { unet_name: 'diffusion_models' },
  CLIPLoader: { clip_name: 'text_encoders' },
  DualCLIPLoader: { clip_name1: 'text_encoders', clip_name2: 'text_encoders' },
  TripleCLIPLoader: { clip_name1: 'text_encoders', clip_name2: 'text_encoders', clip_name3: 'text_encoders' },
  QuadrupleCLIPLoader: {
    clip_name1: 'text_encoders',
    clip_name2: 'text_encoders',
    clip_name3: 'text_encoders',
    clip_name4: 'text_encoders',
  },
  CLIPVisionLoader: { clip_name: 'clip_vision' },
  StyleModelLoader: { style_model_name: 'style_models' },
  GLIGENLoader: { gligen_name: 'gligen' },
  HypernetworkLoader: { hypernetwork_name: 'hypernetworks' },
  PhotoMakerLoader: { photomaker_model_name: 'photomaker' },
  ModelPatchLoader: { name: 'model_patches' },
  AudioEncoderLoader: { audio_encoder_name: 'audio_encoders' },
};

/** Loader input → model folder, for the core loaders and the node packs' (as each pack's definitions say). */
export const MODEL_INPUTS: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.assign(
  {},
  CORE_MODEL_INPUTS,
  ...ALL_NODE_PACKS.map((pack) => packDefinitions(pack).model_inputs),
);

/** LoadImage lists the input folder the same way. */
const INPUT_FILE_INPUTS: Readonly<Record<string, string>> = { LoadImage: 'image', LoadImageMask: 'image' };

/**
 * The node definitions with the loaders' lists made of `models` (folder → files) and LoadImage's
 * of `inputFiles`. Entries that are not files of the recorded folder (VAELoader's `pixel_space`)
 * stay.
 */
export function withModelLists(
  base: ObjectInfo,
  recorded: Readonly<Record<string, readonly string[]>>,
  models: Readonly<Record<string, readonly string[]>>,
  inputFiles: readonly string[],
): ObjectInfo {
  const patched: Record<string, NodeDefinition> = { ...base };
  const relist = (
    classType: string,
    input: string,
    files: readonly string[],
    recordedFiles: readonly string[],
  ) => {
    const definition = patched[classType];
    const spec = definition?.input.required?.[input];
    if (!definition || !spec) return;
    const kept = listOf(spec).filter((entry) => !recordedFiles.includes(String(entry)));
    patched[classType] = {
      ...definition,
      input: {
        ...definition.input,
        required: { ...definition.input.required, [input]: withList(spec, [...files, ...kept]) },
      },
    };
  };
  for (const [classType, inputs] of Object.entries(MODEL_INPUTS)) {
    for (const [input, folder] of Object.entries(inputs)) {
      relist(classType, input, models[folder] ?? [], recorded[folder] ?? []);
    }
  }
  for (const [classType, input] of Object.entries(INPUT_FILE_INPUTS)) {
    relist(
      classType,
      input,
      [...inputFiles].sort(),
      listOf(base[classType]?.input.required?.[input]).map(String),
    );
  }
  return patched;
}

/**
 * ComfyUI's legacy model folder names (`folder_paths.map_legacy`): a loader that lists `unet` gets
 * the files of `diffusion_models` (which reads `models/unet/` too), but `GET /models/unet` answers
 * 404: the route knows only the current names.
 */
export const LEGACY_MODEL_FOLDERS: Readonly<Record<string, string>> = {
  unet: 'diffusion_models',
  clip: 'text_encoders',
};

/** The values a node's input offers in `/object_info` (what the server validates a graph against). */
export function inputOptions(info: ObjectInfo, classType: string, input: string): readonly unknown[] {
  const inputs = info[classType]?.input;
  return listOf(inputs?.required?.[input] ?? inputs?.optional?.[input]);
}

/** A COMBO's allowed values, in either declaration form: `[[values], opts]` or `["COMBO", {options}]`. */
function listOf(spec: InputSpec | undefined): readonly unknown[] {
  if (!spec) return [];
  if (Array.isArray(spec[0])) return spec[0];
  const options = spec[1]?.['options'];
  return Array.isArray(options) ? options : [];
}

function withList(spec: InputSpec, values: readonly unknown[]): InputSpec {
  if (Array.isArray(spec[0])) return spec[1] ? [values, spec[1]] : [values];
  return [spec[0], { ...spec[1], options: values }];
}
