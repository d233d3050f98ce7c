import { endpointByPath } from '@imagegen/contract';
import { isPlan, type Plan } from '../auth/plans.ts';
import { DEFAULT_INPUT_LIMITS, type InputLimits } from '../fetch/input-budget.ts';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from './worker-context.ts';

/** A week: the longest attempt a setting may allow, well within a timer's range (24.8 days). */
const MAX_RUN_SECONDS = 604_800;

/** How long a task may run, and how many of one owner's tasks run at once: the worker's limits. */
export interface TaskLimits {
  /** TASK_MAX_RUN_SECONDS, in ms: one attempt's longest run. */
  readonly attemptTimeoutMs: number;
  /** TASK_MAX_RUN_SECONDS_BY_PIPELINE, in ms: the pipelines with their own. */
  readonly attemptTimeoutsByPipeline: Readonly<Record<string, number>>;
  /** PLAN_CONCURRENCY: tasks of one owner running at once, by plan; 0 is no cap. */
  readonly planConcurrency: Readonly<Record<Plan, number>>;
  /** TASK_MAX_INPUT_IMAGES, _BYTES and _PIXELS: what one task's input images may come to. */
  readonly inputLimits: InputLimits;
}

/**
 * Running tasks per owner by plan when PLAN_CONCURRENCY does not say: more for the larger plans,
 * none for UNLIMITED (the default owner of IMAGEGEN_API_KEY is on it).
 */
export const DEFAULT_PLAN_CONCURRENCY: Readonly<Record<Plan, number>> = {
  FREE: 1,
  TRIAL: 1,
  BASIC: 2,
  STANDARD: 4,
  SUPERCHARGE: 8,
  EPTRIAL: 2,
  EPBASIC: 4,
  EPSTANDARD: 8,
  EPPREMIUM: 16,
  WEEKLY: 2,
  MONTHLY: 4,
  UNLIMITED: 0,
};

/**
 * Reads TASK_MAX_RUN_SECONDS (whole seconds, default 3600), TASK_MAX_RUN_SECONDS_BY_PIPELINE
 * (`/sd/text2image/v1=600,/train_model/v1=7200`), PLAN_CONCURRENCY (`FREE=1,STANDARD=4`; the
 * plans it does not name keep their defaults) and TASK_MAX_INPUT_IMAGES, TASK_MAX_INPUT_BYTES and
 * TASK_MAX_INPUT_PIXELS (whole numbers; defaults DEFAULT_INPUT_LIMITS). Lists are read as IMAGEGEN_PIPELINE_ENGINES is:
 * comma-separated `<name>=<value>` pairs; a malformed pair, an unknown pipeline or plan, or a
 * value out of bounds stops the start with a message naming the setting.
 */
export function taskLimitsFromEnv(env: Readonly<Record<string, string | undefined>>): TaskLimits {
  const seconds = env.TASK_MAX_RUN_SECONDS?.trim()
    ? wholeNumber('TASK_MAX_RUN_SECONDS', env.TASK_MAX_RUN_SECONDS, 1, MAX_RUN_SECONDS)
    : DEFAULT_ATTEMPT_TIMEOUT_MS / 1000;
  const byPipeline: Record<string, number> = {};
  for (const [pipeline, value] of pairs(
    'TASK_MAX_RUN_SECONDS_BY_PIPELINE',
    env.TASK_MAX_RUN_SECONDS_BY_PIPELINE,
  )) {
    const kind = endpointByPath(pipeline)?.kind;
    if (kind !== 'generation' && kind !== 'load_model' && kind !== 'training') {
      throw new Error(`TASK_MAX_RUN_SECONDS_BY_PIPELINE: "${pipeline}" is not a path that queues tasks`);
    }
    byPipeline[pipeline] = wholeNumber('TASK_MAX_RUN_SECONDS_BY_PIPELINE', value, 1, MAX_RUN_SECONDS) * 1000;
  }
  const planConcurrency: Record<Plan, number> = { ...DEFAULT_PLAN_CONCURRENCY };
  for (const [plan, value] of pairs('PLAN_CONCURRENCY', env.PLAN_CONCURRENCY)) {
    if (!isPlan(plan)) throw new Error(`PLAN_CONCURRENCY: "${plan}" is not a plan`);
    planConcurrency[plan] = wholeNumber('PLAN_CONCURRENCY', value, 0, 100_000);
  }
  const limit = (name: string, fallback: number, max: number) =>
    env[name]?.trim() ? wholeNumber(name, env[name]!, 1, max) : fallback;
  const inputLimits: InputLimits = {
    maxImages: limit('TASK_MAX_INPUT_IMAGES', DEFAULT_INPUT_LIMITS.maxImages, 100_000),
    maxBytes: limit('TASK_MAX_INPUT_BYTES', DEFAULT_INPUT_LIMITS.maxBytes, Number.MAX_SAFE_INTEGER),
    maxPixels: limit('TASK_MAX_INPUT_PIXELS', DEFAULT_INPUT_LIMITS.maxPixels, Number.MAX_SAFE_INTEGER),
  };
  return {
    attemptTimeoutMs: seconds * 1000,
    attemptTimeoutsByPipeline: byPipeline,
    planConcurrency,
    inputLimits,
  };
}

function pairs(name: string, value: string | undefined): [string, string][] {
  const found: [string, string][] = [];
  for (const pair of (value ?? '').split(',')) {
    if (!pair.trim()) continue;
    const [key, item, ...rest] = pair.split('=').map((part) => part.trim());
    if (!key || !item || rest.length > 0) throw new Error(`${name}: "${pair}" is not <name>=<number>`);
    found.push([key, item]);
  }
  return found;
}

function wholeNumber(name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d{1,15}$/.test(value.trim()) || n < min || n > max) {
    throw new Error(`${name}: "${value}" is not a whole number from ${min} to ${max}`);
  }
  return n;
}
