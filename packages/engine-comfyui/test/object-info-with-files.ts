import type { InputSpec, ObjectInfo } from '../src/contracts.ts';

/**
 * A copy of an object_info (the recorded one, say) with more files in some COMBO lists, as a server
 * holding those models would list them: `{ CheckpointLoaderSimple: { ckpt_name: ['sd_xl_base_1.0.safetensors'] } }`.
 * The recorded server held only a random SD1.5 checkpoint and a tiny upscaler.
 */
export function objectInfoWithFiles(
  files: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>,
  base: ObjectInfo,
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
