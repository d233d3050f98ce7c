import { readFileSync } from 'node:fs';
import type { ObjectInfo } from '../../comfyui/contracts.ts';
import { NODE_PACKS, type NodePack } from '../../comfyui/node-packs.ts';

/**
 * What the fake answers where a real server answers from its installation: the recordings of a
 * real ComfyUI 0.3.64 (node definitions, system stats, model folders, a refusal body).
 */

const CAPTURES = new URL('../../../comfyui-captures/', import.meta.url);
const PACKS = new URL('../../../comfyui-packs/', import.meta.url);

const read = <T>(file: string): T => JSON.parse(readFileSync(new URL(file, CAPTURES), 'utf8')) as T;
const responseBody = <T>(file: string): T => read<{ response: { body: T } }>(file).response.body;

let objectInfo: ObjectInfo | undefined;

/** `GET /object_info` of the recorded server (parsed once: it is 700 kB). */
export function capturedObjectInfo(): ObjectInfo {
  objectInfo ??= read<ObjectInfo>('object_info.json');
  return objectInfo;
}

export const capturedSystemStats = () => read<Record<string, unknown>>('system_stats.json');

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

const packs = new Map<NodePack, PackDefinitions>();

/** The node definitions written from a pack's source (`comfyui-packs/`). */
export function packDefinitions(pack: NodePack): PackDefinitions {
  let definitions = packs.get(pack);
  if (!definitions) {
    definitions = JSON.parse(
      readFileSync(new URL(NODE_PACKS[pack].definitions, PACKS), 'utf8'),
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
