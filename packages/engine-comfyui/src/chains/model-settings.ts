import type { SubmissionRefusal } from '@imagegen/engines';
import { roleKey } from '../checkpoint-roles.ts';
import type { CompileContext, Refusal } from '../contracts.ts';
import { type Distillation, LCM_SAMPLING, type ModelProfile } from '../model-profiles.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { RequestFields } from './request-fields.ts';
import { type Sampling, samplingFor } from './schedulers.ts';

/**
 * The sampler settings a graph runs with: the request's steps, guidance and scheduler read
 * through the loaded model's profile. A base model takes the request as it is. A distilled one
 * (Lightning, Turbo, Flux Schnell, or any SD model under LCMScheduler's LCM LoRA) replaces the
 * API's defaults, which are a base model's, with its own, keeps its sigma schedule whatever
 * sampler the request names, and refuses steps or guidance past what it was distilled for. Flux
 * Dev reads guidance_scale as its distilled guidance (FluxGuidance), the API's default standing
 * for Dev's own 3.5. The same words refuse at submission (admit) and in the compile.
 */

/** The fields the settings read; a pipeline lacks those its request does not carry. */
export interface SettingsFields {
  readonly num_inference_steps?: number | undefined;
  readonly guidance_scale?: number | undefined;
  readonly scheduler?: string | undefined;
}

export interface ModelSettings extends Sampling {
  readonly steps: number;
  /** The sampler's classifier-free guidance. */
  readonly cfg: number;
  /** Flux Dev's distilled guidance (FluxGuidance), where the model reads one. */
  readonly guidance?: number;
  /** The LCM LoRA file LCMScheduler samples with (LoraLoader, then ModelSamplingDiscrete `lcm`). */
  readonly lcmLora?: string;
  /** A setting of the request the loaded model takes no notice of (the task notes it). */
  readonly ignored?: Refusal;
}

/** The pydantic-style type of a settings refusal at submission. */
export const MODEL_SETTINGS_ERROR = 'value_error.model_settings';

const LCM = 'LCMScheduler';

/** Why each setting is refused, as `requires.refuses` lists it (the messages begin with these). */
export const SETTINGS_WHY = {
  steps: 'more steps than the loaded model is distilled for',
  cfg: 'more guidance than the loaded model is distilled for',
  lcm: 'LCMScheduler samples with the LCM LoRA of the model family, which COMFYUI_CHECKPOINTS does not map',
} as const;

/** The field each settings refusal names. */
const SETTINGS_FIELD: Readonly<Record<keyof typeof SETTINGS_WHY, keyof SettingsFields>> = {
  steps: 'num_inference_steps',
  cfg: 'guidance_scale',
  lcm: 'scheduler',
};

/**
 * Why `guidance_scale` is noted, not refused, where the loaded model reads no guidance (Flux
 * Schnell), as `requires.ignores` lists it.
 */
export const NO_GUIDANCE: Refusal = {
  field: 'guidance_scale',
  why: 'the loaded model takes no guidance (it is guidance-distilled, as Flux Schnell), so it takes no notice of it',
};

/** The settings refusals a pipeline declares: those the models it may load can meet. */
export function settingsRefusals(...kinds: readonly (keyof typeof SETTINGS_WHY)[]): Refusal[] {
  return kinds.map((kind) => ({ field: SETTINGS_FIELD[kind], why: SETTINGS_WHY[kind] }));
}

type Outcome = { settings: ModelSettings } | { refusal: { field: keyof SettingsFields; message: string } };

/** A field's value and whether it holds the API's default (absent: the pipeline's request lacks it). */
function read(fields: RequestFields<SettingsFields>, name: keyof SettingsFields & string) {
  const present = name in fields.input && fields.input[name] !== undefined && fields.input[name] !== null;
  return present ? { value: fields.input[name], atDefault: fields.isDefault(name) } : undefined;
}

function settingsOf(
  profile: ModelProfile,
  fields: RequestFields<SettingsFields>,
  ctx: Pick<CompileContext, 'checkpoints'>,
): Outcome {
  const steps = read(fields, 'num_inference_steps') as { value: number; atDefault: boolean } | undefined;
  const guidance = read(fields, 'guidance_scale') as { value: number; atDefault: boolean } | undefined;
  const scheduler = read(fields, 'scheduler') as { value: string; atDefault: boolean } | undefined;

  let lcmLora: string | undefined;
  let distilled: (Distillation & { steps: number; cfg: number }) | undefined = profile.distilled && {
    ...profile.distilled,
    steps: profile.sampling.steps,
    cfg: profile.sampling.cfg,
  };
  if (scheduler?.value === LCM && !profile.distilled) {
    const key = profile.adapters === 'sd' ? 'sd1.5' : profile.adapters === 'sdxl' ? 'sdxl' : undefined;
    const file = key && ctx.checkpoints[roleKey(key, 'lcm')];
    if (!file) {
      return {
        refusal: {
          field: 'scheduler',
          message: `${SETTINGS_WHY.lcm} (map ${key ?? profile.name}:lcm=<LoRA file> for ${profile.name}, or send another scheduler)`,
        },
      };
    }
    lcmLora = file;
    distilled = LCM_SAMPLING;
  }
  const what = lcmLora ? `${profile.name} with the LCM LoRA` : profile.name;

  let stepCount = steps?.value ?? profile.sampling.steps;
  if (distilled) {
    if (!steps || steps.atDefault) stepCount = distilled.steps;
    else if (steps.value > distilled.maxSteps) {
      return {
        refusal: {
          field: 'num_inference_steps',
          message: `${SETTINGS_WHY.steps}: ${what} samples at most ${distilled.maxSteps} (${distilled.steps} at the default), not ${steps.value}`,
        },
      };
    }
  }

  let cfg = guidance?.value ?? profile.sampling.cfg;
  let fluxGuidance: number | undefined;
  let ignored: Refusal | undefined;
  if (profile.guidance === 'none') {
    if (guidance && !guidance.atDefault) ignored = NO_GUIDANCE;
    cfg = profile.sampling.cfg;
  } else if (profile.guidance === 'flux-guidance') {
    cfg = profile.sampling.cfg;
    fluxGuidance = !guidance || guidance.atDefault ? profile.distilledGuidance : guidance.value;
  } else if (distilled) {
    if (!guidance || guidance.atDefault) cfg = distilled.cfg;
    else if (guidance.value > distilled.maxCfg) {
      return {
        refusal: {
          field: 'guidance_scale',
          message: `${SETTINGS_WHY.cfg}: ${what} samples at a cfg of at most ${distilled.maxCfg} (${distilled.cfg} at the default), not ${guidance.value}`,
        },
      };
    }
  }

  // The request's sampler where it names one; a distilled model keeps its own sigma schedule.
  const named = scheduler && !(distilled && scheduler.atDefault) ? samplingFor(scheduler.value) : undefined;
  const sampling: Sampling = lcmLora
    ? { sampler_name: LCM_SAMPLING.sampler_name, scheduler: LCM_SAMPLING.scheduler }
    : named
      ? {
          sampler_name: named.sampler_name,
          scheduler: distilled ? profile.sampling.scheduler : named.scheduler,
        }
      : { sampler_name: profile.sampling.sampler_name, scheduler: profile.sampling.scheduler };
  return {
    settings: {
      steps: stepCount,
      cfg,
      ...sampling,
      ...(fluxGuidance === undefined ? {} : { guidance: fluxGuidance }),
      ...(lcmLora ? { lcmLora } : {}),
      ...(ignored ? { ignored } : {}),
    },
  };
}

/**
 * The settings a graph samples with; a request past the model's bounds fails naming the field, and
 * a setting the model takes no notice of is noted on the graph `w`.
 */
export function modelSettings(
  w: { note(text: string): void },
  profile: ModelProfile,
  fields: RequestFields<SettingsFields>,
  ctx: Pick<CompileContext, 'checkpoints'>,
): ModelSettings {
  const outcome = settingsOf(profile, fields, ctx);
  if ('refusal' in outcome) return fields.refuse(outcome.refusal.field, outcome.refusal.message);
  const { ignored } = outcome.settings;
  if (ignored) w.note(`${ignored.field}: ${ignored.why}`);
  return outcome.settings;
}

/** The same refusal at submission, or null. */
export function settingsRefusal(
  profile: ModelProfile,
  fields: RequestFields<SettingsFields>,
  ctx: Pick<CompileContext, 'checkpoints'>,
): SubmissionRefusal | null {
  const outcome = settingsOf(profile, fields, ctx);
  return 'refusal' in outcome ? { ...outcome.refusal, type: MODEL_SETTINGS_ERROR } : null;
}

export const LCM_NODES: readonly NodeClass[] = ['LoraLoader', 'ModelSamplingDiscrete'];

/**
 * The model and text encoder with the LCM LoRA and LCM's sampling, where the settings sample with
 * it (as ComfyUI_examples' lcm_basic_example: LoraLoader at 1, ModelSamplingDiscrete `lcm`).
 */
export function applyLcm(
  w: Workflow,
  settings: ModelSettings,
  base: { model: Link<'MODEL'>; clip: Link<'CLIP'> },
): { model: Link<'MODEL'>; clip: Link<'CLIP'> } {
  if (!settings.lcmLora) return base;
  const [model, clip] = w.node('LoraLoader', {
    ...base,
    lora_name: settings.lcmLora,
    strength_model: 1,
    strength_clip: 1,
  }).outputs;
  return { model: w.node('ModelSamplingDiscrete', { model, sampling: 'lcm', zsnr: false }).out(0), clip };
}
