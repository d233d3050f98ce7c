import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { RequestFields } from './request-fields.ts';

/** File extensions ComfyUI loads LoRAs from; a name without one means the `.safetensors` file. */
const MODEL_EXTENSIONS = /\.(safetensors|ckpt|pt|pth|bin)$/i;

export interface LoraChoice {
  readonly file: string;
  readonly weight: number;
}

/**
 * `lora_models` with their `lora_weights` (1 each when no weights are sent). Weights that do not
 * pair up with the models fail the task naming `lora_weights`.
 */
export function loraChoices(fields: RequestFields): LoraChoice[] {
  const models = fields.list<string>('lora_models');
  const weights = fields.list<number>('lora_weights');
  if (weights.length > 0 && weights.length !== models.length) {
    fields.refuse(
      'lora_weights',
      `${weights.length} weight(s) for ${models.length} LoRA model(s) in lora_models; send one weight per model, or none for 1 each`,
    );
  }
  return models.map((name, i) => ({
    file: MODEL_EXTENSIONS.test(name) ? name : `${name}.safetensors`,
    weight: weights[i] ?? 1,
  }));
}

export const LORA_NODES: readonly NodeClass[] = ['LoraLoader'];
export const MODEL_LORA_NODES: readonly NodeClass[] = ['LoraLoaderModelOnly'];

/** One LoraLoader per LoRA, chained: each patches the model and the text encoder. */
export function applyLoras(
  w: Workflow,
  fields: RequestFields,
  base: { model: Link<'MODEL'>; clip: Link<'CLIP'> },
): { model: Link<'MODEL'>; clip: Link<'CLIP'> } {
  let { model, clip } = base;
  for (const { file, weight } of loraChoices(fields)) {
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
export function applyModelLoras(w: Workflow, fields: RequestFields, model: Link<'MODEL'>): Link<'MODEL'> {
  let patched = model;
  for (const { file, weight } of loraChoices(fields)) {
    patched = w
      .node('LoraLoaderModelOnly', { model: patched, lora_name: file, strength_model: weight })
      .out(0);
  }
  return patched;
}
