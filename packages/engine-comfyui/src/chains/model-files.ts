import { EngineInputError, type SubmissionRefusal, USER_MODEL_ID } from '@imagegen/engines';
import { BUILT_IN_FAMILIES, type CheckpointRole, roleKey } from '../checkpoint-roles.ts';
import type { AdmitContext, CompileContext, Refusal } from '../contracts.ts';
import {
  inpaintingVariant,
  MODEL_PROFILES,
  type ModelProfile,
  type ProfileId,
  profileOfFamily,
} from '../model-profiles.ts';
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
  // SDXL's lightning role (`sdxl:lightning`), kept under its older id: ByteDance's 8-step file.
  'sdxl-lightning': 'sdxl_lightning_8step.safetensors',
};

/** What a model's profile may be read from: the settings and, in a worker, the owner's models. */
export type ProfileContext = Pick<CompileContext, 'checkpoints' | 'families' | 'models'>;

/** The profile of each base model an owner's checkpoint may have (`base_model`). */
const PROFILE_OF_BASE_MODEL: Readonly<Record<string, ProfileId>> = {
  'sd1.5': 'sd1.5',
  sdxl: 'sdxl',
  flux: 'flux-dev',
};

/**
 * The profile of the checkpoint a model id loads, where what is known says it: one of the owner's
 * checkpoints (by its base model), an id COMFYUI_CHECKPOINTS declares a family for, or a built-in
 * id; undefined for any other id (an undeclared mapping; an owner's model before the worker
 * resolved it), whose family only its file could tell.
 */
export function knownProfile(ctx: ProfileContext, modelId: string): ModelProfile | undefined {
  const owned = ctx.models?.[modelId];
  if (owned?.modelType === 'checkpoint') {
    const base = PROFILE_OF_BASE_MODEL[owned.baseModel];
    return base ? MODEL_PROFILES[base] : undefined;
  }
  if (ctx.families && Object.hasOwn(ctx.families, modelId)) return profileOfFamily(ctx.families[modelId]!);
  if (Object.hasOwn(BUILT_IN_FAMILIES, modelId)) return profileOfFamily(BUILT_IN_FAMILIES[modelId]!);
  if (Object.hasOwn(FLUX_IDS, modelId)) return MODEL_PROFILES[FLUX_IDS[modelId]!];
  return undefined;
}

/** Flux's ids (kept as model ids of their roles): no checkpoint family, but a request may name them. */
const FLUX_IDS: Readonly<Record<string, ProfileId>> = {
  'flux-dev': 'flux-dev',
  'flux-schnell': 'flux-schnell',
};

/**
 * The profile a graph draws a model id with: its known one, else `fallback` (the path's family: an
 * undeclared id is taken for it, as it always was). With the inpainting role, the inpainting
 * variant where COMFYUI_CHECKPOINTS maps that role for the id, since that checkpoint is what loads.
 */
export function profileOf(
  ctx: ProfileContext,
  modelId: string,
  fallback: ProfileId,
  role?: CheckpointRole,
): ModelProfile {
  const profile = knownProfile(ctx, modelId) ?? MODEL_PROFILES[fallback];
  if (role === 'inpainting' && !ctx.models?.[modelId] && roleFile(ctx, modelId, role) !== undefined) {
    return inpaintingVariant(profile);
  }
  return profile;
}

/**
 * Whether what is known decides the profile a model id draws with: not for an owner's model that
 * is not resolved (at submission, where only the worker can read its base model), whose family
 * the path's may not be.
 */
export function profileDecided(ctx: ProfileContext, modelId: string): boolean {
  return !USER_MODEL_ID.test(modelId) || ctx.models?.[modelId] !== undefined;
}

/** The adapters of a graph that fit one family, and where a model of the other is served. */
export interface FamilyAdapters {
  readonly family: Family;
  /** What fits that family only, e.g. `PuLID's weights`. */
  readonly adapters: string;
  /** Where to go instead, e.g. `send an SDXL model here, or use /facelock/v1 (…)`. */
  readonly instead: string;
}

const FAMILY_NAMES: Readonly<Record<Family, string>> = { sd: 'SD1.5', sdxl: 'SDXL' };

/** The pydantic-style type of a family refusal at submission. */
export const MODEL_FAMILY_ERROR = 'value_error.model_family';

/**
 * The refusal of a `model_id` whose known profile (built-in, declared in COMFYUI_CHECKPOINTS, or
 * an owner's model the worker resolved) the graph's adapters do not fit, so one family's adapter
 * never runs on another's model; null when it fits or its family is not known before its file is.
 * The API answers it at submission (`admit`); `compile` fails with the same words.
 */
export function otherFamilyRefusal(
  ctx: AdmitContext & Pick<CompileContext, 'models'>,
  fit: FamilyAdapters,
): SubmissionRefusal | null {
  const id = typeof ctx.input.model_id === 'string' ? ctx.input.model_id : '';
  const profile = knownProfile(ctx, id);
  if (profile === undefined || profile.adapters === fit.family) return null;
  return {
    field: 'model_id',
    message: `'${id}' is an ${profile.name} model, and ${familyRefusal(fit.family, fit.adapters).why}; ${fit.instead}`,
    type: MODEL_FAMILY_ERROR,
  };
}

/** Fails the compile with otherFamilyRefusal's words, naming `model_id`. */
export function refuseOtherFamily(
  fields: RequestFields<{ readonly model_id: string | undefined }>,
  ctx: CompileContext,
  fit: FamilyAdapters,
): void {
  const refusal = otherFamilyRefusal(ctx, fit);
  if (refusal) fields.refuse('model_id', refusal.message);
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
 * task, naming `model_id`. With a `role` (inpainting), the file COMFYUI_CHECKPOINTS maps to
 * `<id>:<role>` where it maps one, else the id's own: an owner's model has no roles.
 */
export function checkpointFile(
  ctx: CompileContext,
  modelId: string,
  base?: string,
  role?: CheckpointRole,
): string {
  const owned = ownerModelFile(ctx, 'model_id', modelId, { type: 'checkpoint', ...(base ? { base } : {}) });
  if (owned) return owned;
  // A key with a colon is a role's file, never a model id a request may name.
  const mapped = (key: string) =>
    !modelId.includes(':') && Object.hasOwn(ctx.checkpoints, key) ? ctx.checkpoints[key] : undefined;
  const file =
    (role ? mapped(roleKey(modelId, role)) : undefined) ??
    mapped(modelId) ??
    (Object.hasOwn(DEFAULT_CHECKPOINTS, modelId) ? DEFAULT_CHECKPOINTS[modelId] : undefined);
  if (file) return file;
  const ids = [...Object.keys(ctx.checkpoints), ...Object.keys(DEFAULT_CHECKPOINTS)].filter(
    (id) => !id.includes(':'),
  );
  const known = [...new Set(ids)].sort();
  throw new EngineInputError(
    `model_id: unknown model id '${modelId}'; this server knows ${known.map((id) => `'${id}'`).join(', ')} ` +
      '(COMFYUI_CHECKPOINTS maps model ids to checkpoint files)',
  );
}

/** The file a role of a family or fixed id loads where COMFYUI_CHECKPOINTS maps one (`sdxl:lightning`). */
export function roleFile(
  ctx: Pick<CompileContext, 'checkpoints'>,
  id: string,
  role: CheckpointRole,
): string | undefined {
  const key = roleKey(id, role);
  return Object.hasOwn(ctx.checkpoints, key) ? ctx.checkpoints[key] : undefined;
}

/** The file of a pipeline's own model: the mapped one, else the usual name. */
export function fixedModelFile(ctx: CompileContext, model: FixedModel): string {
  return ctx.checkpoints[model] ?? FIXED_MODELS[model].file;
}

/** What the servers need for a model a pipeline loads by id: its usual file, or the mapped one. */
export function modelNeed(id: string, folder: string, file: string): { folder: string; what: string } {
  return { folder, what: `\`${file}\`, or the file \`COMFYUI_CHECKPOINTS\` maps \`${id}\` to` };
}

/** The need of a model id's checkpoint in a role: the role's file where one is mapped, else the id's. */
export function roleNeed(id: string, role: CheckpointRole): { folder: string; what: string } {
  const file = DEFAULT_CHECKPOINTS[id]!;
  return {
    folder: 'checkpoints',
    what: `the file \`COMFYUI_CHECKPOINTS\` maps \`${id}:${role}\` to, else \`${file}\` or the file it maps \`${id}\` to`,
  };
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
