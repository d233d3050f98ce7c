import {
  type Engine,
  EngineInputError,
  type EngineJob,
  type EngineResult,
  type InputImage,
  type RunContext,
} from '@imagegen/engines';
import { removeBackground } from './background-removal.ts';
import { CPU_PIPELINES } from './cpu-pipelines.ts';
import { upscaleTiled } from './esrgan-tiler.ts';
import { describeImage } from './image-tags.ts';
import { acquirePool, cpuThreads, type InferencePool, releasePool } from './inference-pool.ts';
import { JobProgress, NS_PER_PIXEL } from './job-progress.ts';
import {
  type EsrganChoice,
  type EsrganSize,
  modelScaleFor,
  SUPERRESOLUTION_MODEL_MAP,
  UPSCALER_DEBLUR,
} from './model-table.ts';
import { parseKeepAlive, parsePreload, threadsFor } from './models.ts';
import { checkOutputPixels, parseMaxOutputPixels } from './output-pixels.ts';
import { decodeInput, imageField, png, rgbSharp } from './raw-image.ts';

export interface CpuEngineOptions {
  /**
   * Models to load in `start()` (names in models.ts), e.g. `['isnet-medium', 'esrgan-slim-x4']`.
   * Default: what IMAGEGEN_CPU_PRELOAD names; nothing when it is unset (each model loads on first use).
   */
  readonly preload?: readonly string[];
  /** The most pixels one job makes. Default: IMAGEGEN_CPU_MAX_OUTPUT_PIXELS, else 4096 × 4096. */
  readonly maxOutputPixels?: number;
}

/**
 * The pipelines are the keys of cpu-pipelines.ts, which the docs print. `/image2prompt/v1` answers
 * with a tag-style description from real model outputs (image-tags.ts), not a caption: no
 * captioning model ships in an npm package.
 */

/** Patch size when a request names none (`/upscaler/v1` has no `tile`). */
const DEFAULT_TILE = 192;

/**
 * The `cpu` engine: real models shipped inside npm packages, run on worker threads.
 * Background removal (ISNet), ESRGAN upscaling; see model-table.ts for the model mapping.
 *
 * It takes as many jobs at once as it has inference threads (one per core, IMAGEGEN_CPU_THREADS):
 * one job decodes or encodes while another's model runs, and the patches of an upscaling spread
 * over every thread. A job that would make more than its output limit fails before it decodes
 * anything.
 */
export function createCpuEngine(options: CpuEngineOptions = {}): Engine {
  const preload = options.preload ?? parsePreload(process.env.IMAGEGEN_CPU_PRELOAD);
  // The pool reads it when the first job starts it; a wrong value stops the engine now instead.
  parseKeepAlive(process.env.IMAGEGEN_CPU_KEEP_ALIVE_MS);
  const maxOutputPixels =
    options.maxOutputPixels ?? parseMaxOutputPixels(process.env.IMAGEGEN_CPU_MAX_OUTPUT_PIXELS);
  let pool: InferencePool | undefined;
  const use = (): InferencePool => {
    pool ??= acquirePool();
    return pool;
  };

  return {
    name: 'cpu',
    pipelines: CPU_PIPELINES,
    capacity: cpuThreads(),
    async start() {
      if (preload.length === 0) return;
      await use().preload(preload);
      if (preload.includes('isnet-medium')) queueIsnetWarmUp(use());
    },
    async run(job: EngineJob, ctx: RunContext): Promise<EngineResult> {
      switch (job.pipeline) {
        case '/bgremover/v1':
          return backgroundRemover(use, job, ctx, maxOutputPixels);
        case '/superresolution/v1':
          return superresolution(use, job, ctx, maxOutputPixels);
        case '/upscaler/v1':
          return upscaler(use, job, ctx, maxOutputPixels);
        case '/image2prompt/v1':
          return image2prompt(use, job, ctx);
        default:
          throw new Error(`the cpu engine does not serve ${job.pipeline}`);
      }
    },
    async close() {
      if (pool) await releasePool(pool);
      pool = undefined;
    },
  };
}

/**
 * An ISNet session's first run is slower than the rest (onnxruntime grows its arena on it: about 8%
 * more CPU time in page faults; isnet-session.ts). When ISNet is preloaded, one blank run per thread
 * that holds it goes into the pool's queue behind the load, so requests meet a warm session.
 * start() does not wait for it (the queue worker claims at once); a request that arrives within the
 * first seconds queues behind it, as behind any other job. Without preloading, the first removal
 * loads ISNet and is itself that first run.
 */
function queueIsnetWarmUp(pool: InferencePool): void {
  const blank = { data: new Uint8Array(64 * 64 * 3), width: 64, height: 64 };
  for (let run = 0; run < threadsFor('isnet-medium', pool.size); run++) {
    pool.run('isnet-mask', { image: blank }).catch(() => {
      // Only a pool closed before the blank run reached it: nothing to warm any more.
    });
  }
}

async function backgroundRemover(
  use: () => InferencePool,
  job: EngineJob,
  ctx: RunContext,
  maxOutputPixels: number,
): Promise<EngineResult> {
  const input = job.input as Record<string, boolean | undefined>;
  const source = imageField(job.images, 'init_image');
  checkOutputPixels('init_image', source, 1, maxOutputPixels);
  // One ISNet pass at 1024 × 1024 costs about as much as decoding and encoding 40 megapixels.
  const pixels = source.width * source.height;
  const progress = new JobProgress(ctx.progress, {
    decode: pixels * NS_PER_PIXEL.decode,
    remove: 2e9,
    encode: pixels * NS_PER_PIXEL.encode,
  });
  const image = await decodeInput(source, 'init_image');
  ctx.signal.throwIfAborted();
  progress.finished('decode', 'removing the background');
  const started = Date.now();
  const { output, faces } = await removeBackground(
    use(),
    image,
    {
      only_mask: input.only_mask === true,
      mask_background: input.mask_background === true,
      post_process_mask: input.post_process_mask === true,
      alpha_matting: input.alpha_matting === true,
      face_mask: input.face_mask === true,
    },
    ctx.signal,
  );
  progress.finished('remove');
  progress.finished('encode');
  return {
    images: [output],
    meta: {
      model: 'ISNet (imgly medium, onnxruntime-node)',
      ms: Date.now() - started,
      ...(faces !== undefined ? { faces } : {}),
    },
  };
}

export function superresolutionModel(modelName: string): EsrganChoice {
  // A request's `model_name` may be any string (a hash, too): only the table's own names count.
  const choice = Object.hasOwn(SUPERRESOLUTION_MODEL_MAP, modelName)
    ? SUPERRESOLUTION_MODEL_MAP[modelName as keyof typeof SUPERRESOLUTION_MODEL_MAP]
    : undefined;
  if (!choice) {
    throw new EngineInputError(
      `model_name ${modelName} is not available on the cpu engine: it runs only the shipped ESRGAN models ` +
        `behind ${Object.keys(SUPERRESOLUTION_MODEL_MAP).join(', ')}`,
    );
  }
  return choice;
}

async function superresolution(
  use: () => InferencePool,
  job: EngineJob,
  ctx: RunContext,
  maxOutputPixels: number,
): Promise<EngineResult> {
  const input = job.input as {
    model_name: string;
    scale_factor: number;
    tile?: number;
    face_enhance?: boolean;
  };
  const choice = superresolutionModel(input.model_name);
  if (input.face_enhance) {
    throw new EngineInputError(
      'face_enhance needs a face-restoration model (GFPGAN), which the cpu engine does not have; ' +
        'send face_enhance: false, or route the request to an engine with one',
    );
  }
  const scaleFactor = input.scale_factor;
  const scale = modelScaleFor(scaleFactor);
  const tile = Math.max(128, Math.min(256, input.tile ?? DEFAULT_TILE));
  const source = imageField(job.images, 'init_image');
  // The model makes the image at its native scale; a smaller factor is a resize afterwards.
  checkOutputPixels('init_image', source, scale, maxOutputPixels);
  const started = Date.now();
  const upscaled = await upscale(use, source, 'init_image', { size: choice.size, scale, tile }, ctx);
  const width = Math.max(1, Math.round(source.width * scaleFactor));
  const height = Math.max(1, Math.round(source.height * scaleFactor));
  let out = rgbSharp(upscaled.image);
  if (width !== upscaled.image.width || height !== upscaled.image.height) {
    out = out.resize(width, height, { fit: 'fill', kernel: 'lanczos3' });
  }
  const output = await png(out);
  upscaled.progress.finished('encode');
  return {
    images: [output],
    meta: { model: choice.package, native_scale: scale, tile, ms: Date.now() - started },
  };
}

async function upscaler(
  use: () => InferencePool,
  job: EngineJob,
  ctx: RunContext,
  maxOutputPixels: number,
): Promise<EngineResult> {
  const input = job.input as { type?: string };
  if (input.type === 'variation') {
    throw new EngineInputError(
      'type variation re-imagines the image with a diffusion model, which the cpu engine does not have; ' +
        'send type: deblur, or route the request to an engine with one',
    );
  }
  const source = imageField(job.images, 'input_image');
  checkOutputPixels('input_image', source, UPSCALER_DEBLUR.scale, maxOutputPixels);
  const started = Date.now();
  const upscaled = await upscale(
    use,
    source,
    'input_image',
    { size: UPSCALER_DEBLUR.size, scale: UPSCALER_DEBLUR.scale, tile: DEFAULT_TILE },
    ctx,
  );
  const output = await png(rgbSharp(upscaled.image));
  upscaled.progress.finished('encode');
  return {
    images: [output],
    meta: {
      model: `@upscalerjs/esrgan-${UPSCALER_DEBLUR.size}`,
      native_scale: UPSCALER_DEBLUR.scale,
      ms: Date.now() - started,
    },
  };
}

/**
 * Decodes a field's image and upscales it patch by patch, reporting the share done as the
 * patches finish; answers the upscaled image and the progress, whose last step (encoding the
 * result) is the caller's.
 */
async function upscale(
  use: () => InferencePool,
  source: InputImage,
  field: string,
  model: { size: EsrganSize; scale: 2 | 3 | 4; tile: number },
  ctx: RunContext,
) {
  const made = source.width * source.height * model.scale ** 2;
  const progress = new JobProgress(ctx.progress, {
    decode: source.width * source.height * NS_PER_PIXEL.decode,
    upscale: made * (model.size === 'slim' ? NS_PER_PIXEL.esrganSlim : NS_PER_PIXEL.esrganMedium),
    encode: made * NS_PER_PIXEL.encode,
  });
  const image = await decodeInput(source, field);
  ctx.signal.throwIfAborted();
  progress.finished('decode');
  const upscaled = await upscaleTiled(use(), image, {
    size: model.size,
    scale: model.scale,
    tile: model.tile,
    signal: ctx.signal,
    onPatch: (done, total) => progress.partly('upscale', done / total),
  });
  ctx.signal.throwIfAborted();
  progress.finished('upscale');
  return { image: upscaled, progress };
}

async function image2prompt(
  use: () => InferencePool,
  job: EngineJob,
  ctx: RunContext,
): Promise<EngineResult> {
  const source = imageField(job.images, 'input_image');
  const progress = new JobProgress(ctx.progress, { decode: 1, describe: 9 });
  const image = await decodeInput(source, 'input_image', 1024);
  ctx.signal.throwIfAborted();
  progress.finished('decode');
  const started = Date.now();
  const { text, facts } = await describeImage(use(), image, ctx.signal);
  progress.finished('describe');
  return {
    images: [],
    text,
    meta: {
      kind: 'tag-style description (no captioning model on the cpu engine)',
      ...facts,
      ms: Date.now() - started,
    },
  };
}
