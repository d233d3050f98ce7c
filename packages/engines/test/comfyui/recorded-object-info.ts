import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { InputSpec, ObjectInfo } from '../../src/comfyui/contracts.ts';

/** Where the recordings of a real ComfyUI 0.3.64 server lie (see its README). */
export const CAPTURES = path.resolve(import.meta.dirname, '../../comfyui-captures');

/** `GET /object_info` of the recorded server: every node class it has, and its model files. */
export const recordedObjectInfo = JSON.parse(
  readFileSync(path.join(CAPTURES, 'object_info.json'), 'utf8'),
) as ObjectInfo;

/**
 * A copy of the recorded object_info with more files in some COMBO lists, as a server holding
 * those models would list them: `{ CheckpointLoaderSimple: { ckpt_name: ['sd_xl_base_1.0.safetensors'] } }`.
 * The recorded server held only a random SD1.5 checkpoint and a tiny upscaler.
 */
export function objectInfoWithFiles(
  files: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>,
  base: ObjectInfo = recordedObjectInfo,
): ObjectInfo {
  const copy = structuredClone(base) as Record<string, { input: { required?: Record<string, InputSpec> } }>;
  for (const [classType, inputs] of Object.entries(files)) {
    for (const [name, added] of Object.entries(inputs)) {
      const spec = copy[classType]?.input.required?.[name];
      if (!spec || !Array.isArray(spec[0]))
        throw new Error(`${classType}.${name} is not a COMBO list of the recording`);
      const listed = [...new Set([...(spec[0] as string[]), ...added])];
      copy[classType]!.input.required![name] = spec[1] ? [listed, spec[1]] : [listed];
    }
  }
  return copy as ObjectInfo;
}
