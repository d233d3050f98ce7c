import type { CompileContext } from '../contracts.ts';
import type { ModelProfile } from '../model-profiles.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, SAMPLE_NODES, SAVE_NODES, type Workflow } from '../workflow/workflow.ts';
import { EXACT_SIZE_NODES, planSizes, type Size, type SizePlan, scaleTo } from './image-size.ts';
import { type ModelSettings, modelSettings, type SettingsFields } from './model-settings.ts';
import type { Conditioning } from './prompt-encoding.ts';
import type { RequestFields } from './request-fields.ts';
import { HIRES_DENOISE, samplePasses } from './sampling-passes.ts';

/**
 * The end of every SD1.5 / SDXL text-to-image graph: an empty latent near the model's budget at the
 * requested proportions, sampled (a second pass for a size beyond what one pass draws well),
 * decoded and saved at exactly the size asked for.
 */

export const TEXT_TO_IMAGE_NODES: readonly NodeClass[] = nodeClasses(
  ['EmptyLatentImage'],
  SAMPLE_NODES,
  SAVE_NODES,
  EXACT_SIZE_NODES,
);

/** The second pass of a text to image whose sizes reach past the model's one-pass range. */
export const LARGE_TEXT_TO_IMAGE_NODES: readonly NodeClass[] = nodeClasses(TEXT_TO_IMAGE_NODES, [
  'LatentUpscale',
]);

export interface Drawing extends Conditioning {
  readonly model: Link<'MODEL'>;
  readonly vae: Link<'VAE'>;
  readonly profile: ModelProfile;
  readonly settings: Pick<ModelSettings, 'steps' | 'cfg' | 'sampler_name' | 'scheduler'>;
  readonly seed: number;
  readonly target: Size;
  readonly samples: number;
  /** The plan where the caller made its own (InstantID's sizes). */
  readonly plan?: SizePlan;
  /** The empty latent of the model's VAE: SD's 4 channels, or SD3's and Flux's 16. */
  readonly latent?: 'EmptyLatentImage' | 'EmptySD3LatentImage';
}

/** Text to image: `samples` pictures of `target`, sampled from noise with the given conditioning. */
export function drawAtSize(w: Workflow, d: Drawing): void {
  const plan = d.plan ?? planSizes(d.profile, d.target, d.target);
  const latent = w.node(d.latent ?? 'EmptyLatentImage', { ...plan.first, batch_size: d.samples }).out(0);
  const { image, size } = samplePasses(w, {
    sampler: {
      model: d.model,
      seed: d.seed,
      steps: d.settings.steps,
      cfg: d.settings.cfg,
      sampler_name: d.settings.sampler_name,
      scheduler: d.settings.scheduler,
      positive: d.positive,
      negative: d.negative,
    },
    vae: d.vae,
    latent,
    denoise: 1,
    plan,
    secondDenoise: HIRES_DENOISE,
  });
  w.save(scaleTo(w, image, size, d.target));
}

/** The fields drawRequested reads. */
export interface SizedDrawingFields extends SettingsFields {
  readonly num_inference_steps: number | undefined;
  readonly guidance_scale: number | undefined;
  readonly width: number | undefined;
  readonly height: number | undefined;
  readonly samples: number | undefined;
}

/**
 * drawAtSize with the request's `width`, `height` and `samples`, and its steps and guidance read
 * through the model's profile (a distilled model's own where the request left the API's).
 */
export function drawRequested(
  w: Workflow,
  fields: RequestFields<SizedDrawingFields>,
  ctx: CompileContext,
  profile: ModelProfile,
  base: Conditioning & { readonly model: Link<'MODEL'>; readonly vae: Link<'VAE'> },
  plan?: (target: Size) => SizePlan,
): void {
  const target = { width: fields.number('width'), height: fields.number('height') };
  drawAtSize(w, {
    ...base,
    profile,
    settings: modelSettings(w, profile, fields, ctx),
    seed: ctx.seed,
    target,
    samples: fields.number('samples'),
    ...(plan ? { plan: plan(target) } : {}),
  });
}
