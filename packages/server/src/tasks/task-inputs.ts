import type { EngineJob, InputImage, SubmissionRefusal } from '@imagegen/engines';
import type { FetchImageOptions } from '../fetch/image-fetcher.ts';
import { DEFAULT_INPUT_LIMITS, InputBudget, type InputLimits } from '../fetch/input-budget.ts';
import { InputSpool } from '../fetch/input-spool.ts';
import { FinalError } from './final-error.ts';
import type { TaskRecord } from './types.ts';
import type { WorkerContext } from './worker-context.ts';

/** One image link of a request: its field, its place in a list field, and how errors name it. */
export interface ImageRef {
  readonly field: string;
  readonly index?: number;
  /** `init_image`, or `init_images[2]`. */
  readonly label: string;
  readonly url: string;
}

/** Every image link of a request, in field order and list order (empty strings name nothing). */
export function imageRefs(fields: readonly string[], input: Readonly<Record<string, unknown>>): ImageRef[] {
  const refs: ImageRef[] = [];
  for (const field of fields) {
    const value = input[field];
    if (typeof value === 'string' && value !== '') refs.push({ field, label: field, url: value });
    else if (Array.isArray(value)) {
      for (const [index, url] of value.entries()) {
        if (typeof url === 'string') refs.push({ field, index, label: `${field}[${index}]`, url });
      }
    }
  }
  return refs;
}

/**
 * A request that names more images than a task may have (TASK_MAX_INPUT_IMAGES), located at the
 * field whose links go past the limit: the API answers it 422 before anything is queued, and the
 * worker fails a task queued before the limit was lowered. Null within the limit.
 */
export function tooManyImages(
  fields: readonly string[],
  input: Readonly<Record<string, unknown>>,
  maxImages: number,
): SubmissionRefusal | null {
  const refs = imageRefs(fields, input);
  if (refs.length <= maxImages) return null;
  return {
    field: refs[maxImages]!.field,
    message: `the request names ${refs.length} input images, more than the ${maxImages} a task may have (TASK_MAX_INPUT_IMAGES)`,
    type: 'value_error.input_images',
  };
}

/**
 * Fetches a task's input images for its engine: each distinct link once (the same link in several
 * fields or places is one image, fetched, checked and kept once), one after the other with the
 * attempt's signal checked between them, each taking its bytes and pixels from the task's
 * allowance (TASK_MAX_INPUT_BYTES, _PIXELS) before it is decoded, and each kept in the attempt's
 * folder rather than in memory. Answers the engine's images and the folder, which the caller
 * closes once the engine is done with them (null when the task names no image).
 */
export async function fetchTaskImages(
  ctx: WorkerContext,
  task: TaskRecord,
  signal: AbortSignal,
): Promise<{ images: EngineJob['images']; spool: InputSpool | null }> {
  const fields = ctx.imageFields(task.endpoint);
  const limits: InputLimits = ctx.inputLimits ?? DEFAULT_INPUT_LIMITS;
  const tooMany = tooManyImages(fields, task.input, limits.maxImages);
  if (tooMany) throw new FinalError(`${tooMany.field}: ${tooMany.message}`);
  const refs = imageRefs(fields, task.input);
  const images: Record<string, InputImage | InputImage[]> = {};
  for (const field of fields) if (Array.isArray(task.input[field])) images[field] = [];
  if (refs.length === 0) return { images, spool: null };
  const spool = await InputSpool.open();
  try {
    const options: FetchImageOptions = { signal, budget: new InputBudget(limits), spool };
    const byUrl = new Map<string, InputImage>();
    for (const ref of refs) {
      signal.throwIfAborted();
      let image = byUrl.get(ref.url);
      if (!image) {
        image = await fetchOne(ctx, ref, options, signal);
        byUrl.set(ref.url, image);
      }
      if (ref.index === undefined) images[ref.field] = image;
      else (images[ref.field] as InputImage[]).push(image);
    }
    return { images, spool };
  } catch (error) {
    await spool.close();
    throw error;
  }
}

async function fetchOne(
  ctx: WorkerContext,
  ref: ImageRef,
  options: FetchImageOptions,
  signal: AbortSignal,
): Promise<InputImage> {
  try {
    return await ctx.fetcher.fetchImage(ref.url, ref.label, options);
  } catch (error) {
    if (signal.aborted) throw error;
    // The fetcher's InputFetchError already names the field and the reason.
    const text = (error as Error).message;
    throw new FinalError((error as Error).name === 'InputFetchError' ? text : `${ref.label}: ${text}`);
  }
}
