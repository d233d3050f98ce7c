import { readFileSync } from 'node:fs';
import type { NodePack, ObjectInfo } from '@imagegen/engine-comfyui/engine';

/**
 * What the fake answers where a real server answers from its installation: the recordings of a
 * real ComfyUI 0.3.64 (node definitions, system stats, model folders, a refusal body).
 */

const CAPTURES = new URL('../../comfyui-captures/', import.meta.url);
const PACKS = new URL('../../comfyui-packs/', import.meta.url);

/** One recording (`comfyui-captures/`), parsed: an exchange, a server answer or a table of them. */
export const readCapture = <T>(file: string): T =>
  JSON.parse(readFileSync(new URL(file, CAPTURES), 'utf8')) as T;
const responseBody = <T>(file: string): T => readCapture<{ response: { body: T } }>(file).response.body;

let objectInfo: ObjectInfo | undefined;

/** `GET /object_info` of the recorded server (parsed once: it is 700 kB). */
export function capturedObjectInfo(): ObjectInfo {
  objectInfo ??= readCapture<ObjectInfo>('object_info.json');
  return objectInfo;
}

export const capturedSystemStats = () => readCapture<Record<string, unknown>>('system_stats.json');

/** `GET /models`: the model folders, in the server's order. */
export const capturedModelFolders = () => responseBody<string[]>('info-08-get-models.json');

/** The files the recorded server had in each folder (the rest were empty). */
export const capturedModels = (): Record<string, string[]> => ({
  checkpoints: responseBody<string[]>('info-09-get-models-checkpoints.json'),
  upscale_models: responseBody<string[]>('info-10-get-models-upscale_models.json'),
});

export const capturedFeatures = () => responseBody<Record<string, unknown>>('info-06-get-features.json');

/** A real refusal (an unknown checkpoint), answered when the fake is told to refuse prompts. */
export const capturedRefusal = () =>
  responseBody<Record<string, unknown>>('errors-08-post-prompt-error-unknown-checkpoint.json');

/** One pack's node definitions and which model folder each of its loader inputs lists. */
interface PackDefinitions {
  readonly object_info: ObjectInfo;
  readonly model_inputs: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/**
 * The file under `comfyui-packs/` that holds each pack's node definitions as `/object_info` answers
 * them (read from the pack's source at the commit that folder's README names).
 */
const PACK_DEFINITION_FILES: Readonly<Record<NodePack, string>> = {
  ComfyUI_IPAdapter_plus: 'ipadapter-plus.json',
  'ComfyUI-ReActor': 'reactor.json',
  'ComfyUI-IC-Light': 'ic-light.json',
  comfyui_controlnet_aux: 'controlnet-aux.json',
  'ComfyUI-Florence2': 'florence2.json',
  PuLID_ComfyUI: 'pulid.json',
  comfyui_jankhidiffusion: 'jankhidiffusion.json',
  ComfyUI_InstantID: 'instantid.json',
  'ComfyUI-RMBG': 'rmbg.json',
  ComfyUI_CatVTON_Wrapper: 'catvton.json',
  'ComfyUI-segment-anything-2': 'segment-anything-2.json',
  style_aligned_comfy: 'style-aligned.json',
};

const packs = new Map<NodePack, PackDefinitions>();

/** The node definitions written from a pack's source (`comfyui-packs/`). */
export function packDefinitions(pack: NodePack): PackDefinitions {
  let definitions = packs.get(pack);
  if (!definitions) {
    definitions = JSON.parse(
      readFileSync(new URL(PACK_DEFINITION_FILES[pack], PACKS), 'utf8'),
    ) as PackDefinitions;
    packs.set(pack, definitions);
  }
  return definitions;
}

/** The recorded core definitions with these packs' added: a server with the packs installed. */
export function objectInfoWithPacks(packNames: readonly NodePack[]): ObjectInfo {
  return Object.assign(
    {},
    capturedObjectInfo(),
    ...packNames.map((pack) => packDefinitions(pack).object_info),
  );
}
