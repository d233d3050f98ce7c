import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { RequestFields } from './request-fields.ts';
import { ownerModelFile } from './user-models.ts';

/** File extensions ComfyUI loads LoRAs from; a name without one means the `.safetensors` file. */
const MODEL_EXTENSIONS = /\.(safetensors|ckpt|pt|pth|bin)$/i;

export interface LoraChoice {
  readonly file: string;
  readonly weight: number;
}

/** The fields the LoRA stack reads. */
export interface LoraFields {
  readonly lora_models: readonly string[] | null | undefined;
  readonly lora_weights: readonly number[] | null | undefined;
}

/**
 * `lora_models` with their `lora_weights` (1 each when no weights are sent). Weights that do not
 * pair up with the models fail the task naming `lora_weights`. A model id names one of the owner's
 * LoRAs (of `base`, the graph's base model, when given); any other name is a file on the server.
 */
export function loraChoices(fields: RequestFields<LoraFields>, base?: string): LoraChoice[] {
  const models = fields.list('lora_models');
  const weights = fields.list('lora_weights');
  if (weights.length > 0 && weights.length !== models.length) {
    fields.refuse(
      'lora_weights',
      `${weights.length} weight(s) for ${models.length} LoRA model(s) in lora_models; send one weight per model, or none for 1 each`,
    );
  }
  const wanted = { type: 'lora', ...(base ? { base } : {}) } as const;
  return models.map((name, i) => ({
    file:
      ownerModelFile(fields, 'lora_models', name, wanted) ??
      (MODEL_EXTENSIONS.test(name) ? name : `${name}.safetensors`),
    weight: weights[i] ?? 1,
  }));
}

export const LORA_NODES: readonly NodeClass[] = ['LoraLoader'];
export const MODEL_LORA_NODES: readonly NodeClass[] = ['LoraLoaderModelOnly'];

/** One LoraLoader per LoRA, chained: each patches the model and the text encoder. */
export function applyLoras(
  w: Workflow,
  fields: RequestFields<LoraFields>,
  base: { model: Link<'MODEL'>; clip: Link<'CLIP'> },
  /** The graph's base model (`sd1.5`, `sdxl`): the owner's LoRAs must be of it. */
  baseModel?: string,
): { model: Link<'MODEL'>; clip: Link<'CLIP'> } {
  let { model, clip } = base;
  for (const { file, weight } of loraChoices(fields, baseModel)) {
    [model, clip] = w.node('LoraLoader', {
      model,
      clip,
      lora_name: file,
      strength_model: weight,
      strength_clip: weight,
    }).outputs;
  }
  return { model, clip };
}

/** For models whose text encoders LoRAs do not patch (Flux): LoraLoaderModelOnly, chained. */
export function applyModelLoras(
  w: Workflow,
  fields: RequestFields<LoraFields>,
  model: Link<'MODEL'>,
  baseModel?: string,
): Link<'MODEL'> {
  let patched = model;
  for (const { file, weight } of loraChoices(fields, baseModel)) {
    patched = w
      .node('LoraLoaderModelOnly', { model: patched, lora_name: file, strength_model: weight })
      .out(0);
  }
  return patched;
}
