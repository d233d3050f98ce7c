import { randomUUID } from 'node:crypto';
import { compileRequestValidator, endpointByPath } from '@imagegen/contract';
import type { ApiPrompt, ComfyClient, PipelineCompiler } from './contracts.ts';

/**
 * The warm-up prompts (COMFYUI_WARMUP): on each server, when it first answers and again after it
 * was down (a restarted ComfyUI holds nothing), the smallest graph of each model family it serves
 * is run once, so the weights are loaded before the first user's job instead of during it. Each is
 * its family's text2image at 64 x 64 pixels and one step; its picture is a preview (ComfyUI's temp
 * folder, emptied when it starts), never an output file.
 */

/** The families a warm-up can load, each by the path and request that loads its weights. */
export const WARMUP_FAMILIES = {
  'sd1.5': { pipeline: '/sd/text2image/v1', body: { negative_prompt: '', width: 64, height: 64 } },
  sdxl: { pipeline: '/sdxl/text2image/v1', body: { negative_prompt: '', width: 64, height: 64 } },
  sd3: { pipeline: '/sd3/v1', body: { negative_prompt: '', samples: 1, guidance_scale: 7.5 } },
  'sd3.5': { pipeline: '/sd3_5/v1', body: { negative_prompt: '', samples: 1, guidance_scale: 7.5 } },
  flux: { pipeline: '/generate/v3', body: { width: 64, height: 64 } },
} as const satisfies Record<string, { pipeline: string; body: Record<string, unknown> }>;

export type WarmupFamily = keyof typeof WARMUP_FAMILIES;

const FAMILIES = Object.keys(WARMUP_FAMILIES) as WarmupFamily[];

/** The COMFYUI_CHECKPOINTS keys that map each family's weights. */
const MAPPED_BY: Readonly<Record<WarmupFamily, readonly string[]>> = {
  'sd1.5': ['sd1.5'],
  sdxl: ['sdxl'],
  sd3: ['sd3'],
  'sd3.5': ['sd3.5'],
  flux: ['flux-schnell', 'flux-dev'],
};

/**
 * COMFYUI_WARMUP: `off`, or the families to warm up (`sd1.5,sdxl,sd3,sd3.5,flux`). Unset: each
 * family whose weights COMFYUI_CHECKPOINTS maps (a server runs what its operator mapped).
 */
export function parseWarmup(
  value: string | undefined,
  checkpoints: Readonly<Record<string, string>>,
): WarmupFamily[] {
  const text = value?.trim() ?? '';
  if (text === '')
    return FAMILIES.filter((family) => MAPPED_BY[family].some((key) => Object.hasOwn(checkpoints, key)));
  if (text === 'off') return [];
  const families: WarmupFamily[] = [];
  for (const part of text.split(',')) {
    const family = part.trim() as WarmupFamily;
    if (!FAMILIES.includes(family)) {
      throw new Error(`COMFYUI_WARMUP: "${part.trim()}" is not off or a family (${FAMILIES.join(', ')})`);
    }
    if (!families.includes(family)) families.push(family);
  }
  return families;
}

/** A family's warm-up graph: its text2image, one step, its pictures shown as previews only. */
export function warmupPrompt(
  family: WarmupFamily,
  compiler: PipelineCompiler,
  checkpoints: Readonly<Record<string, string>>,
): ApiPrompt {
  const { pipeline, body } = WARMUP_FAMILIES[family];
  const checked = compileRequestValidator(endpointByPath(pipeline)!)({
    prompt: 'warm-up',
    num_inference_steps: 1,
    ...body,
  });
  if (!checked.ok)
    throw new Error(`the ${family} warm-up request is not valid: ${JSON.stringify(checked.detail)}`);
  const { prompt } = compiler.compile({
    input: checked.value as Record<string, unknown>,
    seed: 0,
    images: {},
    filenamePrefix: 'imagegen/warm-up/img',
    checkpoints,
  });
  return Object.fromEntries(
    Object.entries(prompt).map(([id, node]) => [
      id,
      node.class_type === 'SaveImage'
        ? { class_type: 'PreviewImage', inputs: { images: node.inputs.images } }
        : node,
    ]),
  );
}

/**
 * Runs each family's warm-up on one server, one after the other. A family the server cannot run
 * (a checkpoint it lacks) is skipped and logged: the warm-up never fails anything.
 */
export async function warmUp(
  client: ComfyClient,
  prompts: readonly { family: WarmupFamily; prompt: ApiPrompt }[],
  options: { signal: AbortSignal; log: (line: string) => void; onStatus: (family: WarmupFamily) => void },
): Promise<void> {
  for (const { family, prompt } of prompts) {
    options.onStatus(family);
    const started = performance.now();
    try {
      await client.run(prompt, { promptId: randomUUID(), outputNodes: [], signal: options.signal });
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      options.log(`ComfyUI server ${client.name}: warmed up ${family} in ${seconds} s`);
    } catch (error) {
      if (options.signal.aborted) return;
      options.log(`ComfyUI server ${client.name}: the ${family} warm-up failed: ${(error as Error).message}`);
    }
  }
}
