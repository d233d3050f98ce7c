import type { EngineJob, EngineResult, RunContext } from '@imagegen/engines';
import { sleep } from './abortable-sleep.ts';

/**
 * `/train_model/v1` on the sandbox engine: no weights are trained. It walks through the training
 * states a real trainer reports (initialising while it "loads the base model", then running with
 * progress per step), takes a moment proportional to `max_train_steps`, and answers `model` marks
 * that make the worker tag the registered model as a sandbox model, so nobody mistakes it for a
 * trained one.
 */

/** The tag the model record gets, and the note its description starts with. */
export const SANDBOX_MODEL_TAG = 'sandbox';
export const SANDBOX_MODEL_NOTE =
  '[sandbox model: no weights were trained; the sandbox engine answered this training]';

/** Simulated time per training step, and the bound on a whole run (the contract's 300 steps). */
export const SANDBOX_TRAINING_STEP_MS = 20;
export const SANDBOX_TRAINING_MAX_MS = 6_000;

export interface SandboxTrainingOptions {
  /** Simulated time per training step (default SANDBOX_TRAINING_STEP_MS). */
  readonly stepMs?: number;
  /** Upper bound on the whole run (default SANDBOX_TRAINING_MAX_MS). */
  readonly maxMs?: number;
}

/** The share of the run spent before the first progress report: the status reads `initialising`. */
const INITIALISING_SHARE = 0.2;
/** At most this many progress reports per second; each step still counts. */
const REPORT_EVERY_MS = 50;

export async function sandboxTraining(
  job: EngineJob,
  ctx: RunContext,
  options: SandboxTrainingOptions = {},
): Promise<EngineResult> {
  const steps = positiveInteger(job.input.max_train_steps) ?? 1;
  const totalMs = Math.min(
    options.maxMs ?? SANDBOX_TRAINING_MAX_MS,
    steps * (options.stepMs ?? SANDBOX_TRAINING_STEP_MS),
  );
  const photos = job.images.images;
  const photoCount = Array.isArray(photos) ? photos.length : photos ? 1 : 0;

  ctx.signal.throwIfAborted();
  const started = Date.now();
  await sleep(totalMs * INITIALISING_SHARE, ctx.signal);
  const stepMs = (totalMs * (1 - INITIALISING_SHARE)) / steps;
  const runStart = Date.now();
  let reported = 0;
  for (let step = 1; step <= steps; step++) {
    const due = runStart + step * stepMs - Date.now();
    if (due > 0) await sleep(due, ctx.signal);
    ctx.signal.throwIfAborted();
    if (step === 1 || step === steps || Date.now() - reported >= REPORT_EVERY_MS) {
      ctx.progress(step / steps, `sandbox training step ${step} of ${steps}`);
      reported = Date.now();
    }
  }
  return {
    images: [],
    meta: {
      engine: 'sandbox',
      sandbox: true,
      max_train_steps: steps,
      training_images: photoCount,
      simulated_ms: Date.now() - started,
    },
    model: { tags: [SANDBOX_MODEL_TAG], descriptionNote: SANDBOX_MODEL_NOTE },
  };
}

function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}
