import { EngineInputError } from '../../engine.ts';
import type { CompileContext, Refusal } from '../contracts.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import { nodeClasses, SAMPLE_NODES, SAVE_NODES } from '../workflow/workflow.ts';
import type { Family } from './controlnet-stack.ts';
import { PROMPT_NODES } from './prompt-encoding.ts';
import type { RequestFields } from './request-fields.ts';
import { ownerModelFile } from './user-models.ts';

/**
 * Model ids and the files they load on a ComfyUI server. `COMFYUI_CHECKPOINTS` (the context's
 * `checkpoints`) maps ids to file names; an id it does not name loads the file ComfyUI's own
 * examples use for that model, so a server set up by those examples needs no mapping at all.
 */

/** The model ids a request's `model_id` may name without a mapping, and the checkpoints they load. */
export const DEFAULT_CHECKPOINTS: Readonly<Record<string, string>> = {
  'sd1.5': 'v1-5-pruned-emaonly.safetensors',
  sdxl: 'sd_xl_base_1.0.safetensors',
};

/** The family of each built-in model id: the adapters, controlnets and CLIP layers that fit it. */
const FAMILY_OF_MODEL: Readonly<Record<string, Family>> = { 'sd1.5': 'sd', sdxl: 'sdxl' };

/** The family of a built-in model id; undefined for any other id (a mapped or owner's model). */
export function familyOfModel(modelId: string): Family | undefined {
  return FAMILY_OF_MODEL[modelId];
}

const FAMILY_NAMES: Readonly<Record<Family, string>> = { sd: 'SD1.5', sdxl: 'SDXL' };

/**
 * Refuses a `model_id` of a built-in id whose family the graph's adapters do not fit (`adapters`
 * names them; `instead` says where that model is served), so one family's adapter never runs on
 * the other's model. Other ids are the operator's or the owner's, whose base model is checked
 * where their file is looked up.
 */
export function refuseOtherFamily(
  fields: RequestFields<{ readonly model_id: string | undefined }>,
  family: Family,
  adapters: string,
  instead: string,
): void {
  const id = fields.string('model_id');
  const modelFamily = familyOfModel(id);
  if (modelFamily === undefined || modelFamily === family) return;
  fields.refuse(
    'model_id',
    `'${id}' is an ${FAMILY_NAMES[modelFamily]} model, and ${familyRefusal(family, adapters).why}; ${instead}`,
  );
}

/** That refusal as `requires.refuses` lists it. */
export function familyRefusal(family: Family, adapters: string): Refusal {
  return { field: 'model_id', why: `${adapters} fit ${FAMILY_NAMES[family]} models only` };
}

/**
 * The models of the pipelines that take no `model_id`: one id each, mappable like the others, and
 * the folder its file lies in (Flux loads a bare diffusion model, not a checkpoint).
 */
export const FIXED_MODELS = {
  sd3: { folder: 'checkpoints', file: 'sd3_medium.safetensors' },
  'sd3.5': { folder: 'checkpoints', file: 'sd3.5_large.safetensors' },
  // Flux loads a bare diffusion model; /generate/v3 runs schnell unless `flux-dev` is mapped.
  'flux-schnell': { folder: 'diffusion_models', file: 'flux1-schnell.safetensors' },
  'flux-dev': { folder: 'diffusion_models', file: 'flux1-dev.safetensors' },
} as const;

export type FixedModel = keyof typeof FIXED_MODELS;

/** The text encoders SD3 and Flux load beside their model (folder `text_encoders`). */
export const TEXT_ENCODERS = {
  clipL: 'clip_l.safetensors',
  clipG: 'clip_g.safetensors',
  t5xxl: 't5xxl_fp16.safetensors',
} as const;

/** Flux's VAE (folder `vae`). */
export const FLUX_VAE = 'ae.safetensors';

/**
 * The checkpoint file of a request's model id: one of the owner's loaded checkpoints (of `base`,
 * the graph's base model, when given), else a mapped or default id; an id nobody maps fails the
 * task, naming `model_id`.
 */
export function checkpointFile(ctx: CompileContext, modelId: string, base?: string): string {
  const owned = ownerModelFile(ctx, 'model_id', modelId, { type: 'checkpoint', ...(base ? { base } : {}) });
  if (owned) return owned;
  const file = ctx.checkpoints[modelId] ?? DEFAULT_CHECKPOINTS[modelId];
  if (file) return file;
  const known = [...new Set([...Object.keys(ctx.checkpoints), ...Object.keys(DEFAULT_CHECKPOINTS)])].sort();
  throw new EngineInputError(
    `model_id: unknown model id '${modelId}'; this server knows ${known.map((id) => `'${id}'`).join(', ')} ` +
      '(COMFYUI_CHECKPOINTS maps model ids to checkpoint files)',
  );
}

/** The file of a pipeline's own model: the mapped one, else the usual name. */
export function fixedModelFile(ctx: CompileContext, model: FixedModel): string {
  return ctx.checkpoints[model] ?? FIXED_MODELS[model].file;
}

/** What the servers need for a model a pipeline loads by id: its usual file, or the mapped one. */
export function modelNeed(id: string, folder: string, file: string): { folder: string; what: string } {
  return { folder, what: `\`${file}\`, or the file \`COMFYUI_CHECKPOINTS\` maps \`${id}\` to` };
}

/** The need of one of FIXED_MODELS. */
export function fixedModelNeed(model: FixedModel): { folder: string; what: string } {
  return modelNeed(model, FIXED_MODELS[model].folder, FIXED_MODELS[model].file);
}

/** The need of a model id of DEFAULT_CHECKPOINTS, for the pipelines that fix which one they load. */
export function checkpointNeed(id: string): { folder: string; what: string } {
  return modelNeed(id, 'checkpoints', DEFAULT_CHECKPOINTS[id]!);
}

export const CHECKPOINT_NODES: readonly NodeClass[] = ['CheckpointLoaderSimple'];

/** Every graph that samples a checkpoint from prompts: loader, prompts, sampler and decoder, SaveImage. */
export const CHECKPOINT_DIFFUSION_NODES: readonly NodeClass[] = nodeClasses(
  CHECKPOINT_NODES,
  PROMPT_NODES,
  SAMPLE_NODES,
  SAVE_NODES,
);

export interface LoadedCheckpoint {
  readonly model: Link<'MODEL'>;
  readonly clip: Link<'CLIP'>;
  readonly vae: Link<'VAE'>;
}

/** CheckpointLoaderSimple, recorded as the graph's model for affinity. */
export function loadCheckpoint(w: Workflow, file: string): LoadedCheckpoint {
  w.usesModel(file);
  const [model, clip, vae] = w.node('CheckpointLoaderSimple', { ckpt_name: file }).outputs;
  return { model, clip, vae };
}
