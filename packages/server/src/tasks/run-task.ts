import {
  type EngineJob,
  type EngineResult,
  type InputImage,
  type ModelOutput,
  type RunContext,
  registersWithoutEngine,
} from '@imagegen/engines';
import { allocateOutputKeys, extensionFor } from '../storage/blob-keys.ts';
import { stripMetadata } from '../storage/strip-metadata.ts';
import { outputTotals, type UsageFacts } from '../usage/usage-facts.ts';
import { jobModels } from './models/job-models.ts';
import { NO_ENHANCER_NOTE } from './prompt-enhancer.ts';
import { drawSeed } from './submit.ts';
import type { TaskRecord, TaskResult } from './types.ts';
import { taskFields, taskLabels, type WorkerContext } from './worker-context.ts';

/** An error the task's owner reads as is, and which no retry can cure. */
export class FinalError extends Error {}

/** What one attempt produced: the task's result, its stored outputs, and its model's marks. */
export interface TaskOutcome {
  readonly result: TaskResult;
  readonly outputKeys: string[];
  /** What the engine produced for the task's model record (load_model, train_model). */
  readonly model?: ModelOutput;
  /** How many images the engine drew and their pixels, for the usage record (absent: none). */
  readonly totals?: Pick<UsageFacts, 'images' | 'pixels'>;
}

/**
 * Runs one attempt of a task: fetches its input images, runs the preflight checks, hands the job
 * to the engine that serves its pipeline, checks the outputs when the request asked for the safety
 * checker, and stores them. Writes nothing to the task: settling it is the caller's.
 */
export async function runTask(
  ctx: WorkerContext,
  task: TaskRecord,
  signal: AbortSignal,
  /** Where the engine's progress and previews go (the attempt's lease). */
  report: Pick<RunContext, 'progress' | 'preview'>,
  /** The engine servers its routing allows (`EngineJob.servers`); absent: any. */
  servers?: readonly string[],
): Promise<TaskOutcome> {
  const engine = ctx.engines.engineFor(task.endpoint);
  const seed = typeof task.input.seed === 'number' && task.input.seed >= 0 ? task.input.seed : drawSeed();
  if (!engine) {
    // Registering a model is bookkeeping, not inference: without an engine that loads weights
    // the model row is simply marked ready.
    if (registersWithoutEngine(task.endpoint)) return { result: { meta: {} }, outputKeys: [] };
    throw new FinalError(`no engine serves ${task.endpoint}`);
  }
  const models = await jobModels(ctx.pool, task);
  const job: EngineJob = {
    pipeline: task.endpoint,
    input: task.input,
    // A load's sample_images are links shown with the model, not an input of any engine.
    images: task.kind === 'load_model' ? {} : await fetchImages(ctx, task, signal),
    seed,
    ...(servers ? { servers } : {}),
    ...(models ? { models } : {}),
  };
  // A check the caller asked for is never skipped in silence: without a checker on this worker
  // the task fails before any compute is spent.
  if (task.input.safety_checker === true && !ctx.safety) {
    throw new FinalError(
      'safety_checker: this worker has no safety checker (enable the cpu engine in IMAGEGEN_ENGINES)',
    );
  }
  for (const preflight of ctx.preflights ?? []) {
    if (preflight.pipelines.includes(task.endpoint)) await preflight.check(job, signal);
  }
  signal.throwIfAborted();
  const enhanced = await enhancePrompt(ctx, job, signal);
  const engineStarted = performance.now();
  const output = withoutMetadata(
    await engine.run(enhanced.job, {
      signal,
      progress: report.progress,
      ...(report.preview ? { preview: report.preview } : {}),
    }),
  );
  ctx.metrics?.engineRuns.observe(taskLabels(ctx, task), (performance.now() - engineStarted) / 1000);
  signal.throwIfAborted();
  if (task.input.safety_checker === true) await checkSafety(ctx, output, signal);
  const outputKeys = await storeOutputs(ctx, task, output);
  const started = task.startedAt?.getTime() ?? Date.now();
  const notes = [...enhanced.notes, ...(output.notes ?? [])];
  if (notes.length > 0)
    ctx.log(`ran otherwise than the request reads: ${notes.join('; ')}`, taskFields(task, 'info'));
  const result: TaskResult = {
    ...(task.input.base64 === true
      ? { base64: output.images.map((image) => image.data.toString('base64')) }
      : {}),
    ...(output.text !== undefined ? { text: output.text } : {}),
    ...(task.kind === 'training' ? { training_duration_seconds: (Date.now() - started) / 1000 } : {}),
    meta: { ...output.meta, engine: engine.name, seed },
    ...(notes.length > 0 ? { notes } : {}),
  };
  return {
    result,
    outputKeys,
    totals: outputTotals(output),
    ...(output.model ? { model: output.model } : {}),
  };
}

/**
 * The job with its prompt rewritten where the request asks (`enhance_prompt: true`), by the
 * worker's language model, and the note that says what became of it. Any engine gets the rewritten
 * prompt; the task's own input keeps the prompt as sent.
 */
async function enhancePrompt(
  ctx: WorkerContext,
  job: EngineJob,
  signal: AbortSignal,
): Promise<{ job: EngineJob; notes: string[] }> {
  if (job.input.enhance_prompt !== true || typeof job.input.prompt !== 'string') return { job, notes: [] };
  if (!ctx.promptEnhancer) return { job, notes: [NO_ENHANCER_NOTE] };
  const { prompt, note } = await ctx.promptEnhancer.enhance(job.input.prompt, signal);
  return { job: { ...job, input: { ...job.input, prompt } }, notes: [note] };
}

/**
 * The engine's images without the metadata they were written with (ComfyUI's graph in its PNGs,
 * EXIF, XMP): every engine's outputs are handed out clean, stored and in `base64` alike.
 */
function withoutMetadata(output: EngineResult): EngineResult {
  return {
    ...output,
    images: output.images.map((image) => ({ ...image, data: stripMetadata(image.data, image.contentType) })),
  };
}

async function fetchImages(
  ctx: WorkerContext,
  task: TaskRecord,
  signal: AbortSignal,
): Promise<EngineJob['images']> {
  const images: Record<string, InputImage | readonly InputImage[]> = {};
  for (const field of ctx.imageFields(task.endpoint)) {
    const value = task.input[field];
    if (typeof value === 'string' && value !== '') {
      images[field] = await fetchOne(ctx, value, field, signal);
    } else if (Array.isArray(value)) {
      const list: InputImage[] = [];
      for (const [n, url] of value.entries()) {
        if (typeof url === 'string') list.push(await fetchOne(ctx, url, `${field}[${n}]`, signal));
      }
      images[field] = list;
    }
  }
  return images;
}

async function fetchOne(
  ctx: WorkerContext,
  url: string,
  field: string,
  signal: AbortSignal,
): Promise<InputImage> {
  try {
    return await ctx.fetcher.fetchImage(url, field, signal);
  } catch (error) {
    if (signal.aborted) throw error;
    // The fetcher's InputFetchError already names the field and the reason.
    const text = (error as Error).message;
    throw new FinalError((error as Error).name === 'InputFetchError' ? text : `${field}: ${text}`);
  }
}

async function checkSafety(ctx: WorkerContext, output: EngineResult, signal: AbortSignal): Promise<void> {
  for (const [n, image] of output.images.entries()) {
    const verdict = await ctx.safety!.classify(image, signal);
    if (verdict.unsafe) {
      const scores = Object.entries(verdict.scores)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 2)
        .map(([label, score]) => `${label} ${score.toFixed(2)}`)
        .join(', ');
      throw new FinalError(
        `safety_checker: output image ${n + 1} of ${output.images.length} was classified unsafe (${scores})`,
      );
    }
  }
}

async function storeOutputs(ctx: WorkerContext, task: TaskRecord, output: EngineResult): Promise<string[]> {
  const images = output.images;
  const keys = task.outputKeys.slice(0, images.length);
  if (keys.length < images.length) {
    const more = allocateOutputKeys(
      images.length,
      task.input.file_prefix,
      extensionFor(images[0]!.contentType),
    );
    keys.push(...more.slice(keys.length));
  }
  await Promise.all(images.map((image, n) => ctx.store.put(keys[n]!, image.data, image.contentType)));
  // Pre-allocated links the engine did not fill stay listed but answer 404, never stale data.
  return task.outputKeys.length > keys.length ? [...keys, ...task.outputKeys.slice(keys.length)] : keys;
}
