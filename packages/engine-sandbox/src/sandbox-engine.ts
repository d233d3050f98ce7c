import { endpointByPath } from '@imagegen/contract';
import type { Engine, EngineJob, EngineResult, OutputImage, RunContext } from '@imagegen/engines';
import { ThreadPool } from '@imagegen/engines/threads';
import sharp from 'sharp';
import { sleep } from './abortable-sleep.ts';
import { SANDBOX_TRAINING_PIPELINE, sandboxPipelines } from './sandbox-pipelines.ts';
import type { SamplePixels, SampleRequest } from './sandbox-pixels.ts';
import { type SandboxTrainingOptions, sandboxTraining } from './sandbox-training.ts';

/**
 * The sandbox engine: placeholder images for integration tests and for trying the API without a
 * GPU. Never silent: every image says, in large yellow letters, that it is sandbox output, and
 * shows the pipeline, prompt, seed and parameters it was asked for. The images are exactly the
 * requested size, `samples` of them, and the same bytes for the same request and seed anywhere
 * (an embedded bitmap font, no system fonts). `/train_model/v1` answers a labelled sandbox model
 * (sandbox-training.ts).
 */

export interface SandboxEngineOptions {
  /** Pipelines to serve (default: every drawing pipeline and training, sandbox-pipelines.ts). */
  readonly pipelines?: readonly string[];
  /** Simulated work per task, spread over its samples, with progress; aborts promptly. */
  readonly delayMs?: number;
  /** `/train_model/v1`: simulated time per step and its bound (sandbox-training.ts). */
  readonly training?: SandboxTrainingOptions;
}

/** The contract's default size of 1024 ("SDXL and most others"), for pipelines whose request has no size. */
const FALLBACK_SIZE = 1024;
const MAX_SAMPLES = 16;

export function createSandboxEngine(options: SandboxEngineOptions = {}): Engine {
  const pipelines = options.pipelines ?? sandboxPipelines();
  // One drawing thread: placeholders are cheap, and a burst of them never takes more than a core.
  const drawing = new ThreadPool<SampleRequest, SamplePixels>(
    new URL('./sandbox-thread.ts', import.meta.url),
  );
  return {
    name: 'sandbox',
    pipelines,
    async run(job: EngineJob, ctx: RunContext): Promise<EngineResult> {
      if (job.pipeline === SANDBOX_TRAINING_PIPELINE) return sandboxTraining(job, ctx, options.training);
      ctx.signal.throwIfAborted();
      const { width, height } = outputSize(job);
      const samples = sampleCount(job);
      const images: OutputImage[] = [];
      for (let sample = 0; sample < samples; sample++) {
        if (options.delayMs) await sleep(options.delayMs / samples, ctx.signal);
        ctx.signal.throwIfAborted();
        const request = {
          pipeline: job.pipeline,
          input: job.input,
          seed: job.seed,
          sample,
          samples,
          width,
          height,
        };
        images.push(await encodeSample(await drawing.run(request, { signal: ctx.signal }), width, height));
        ctx.progress((sample + 1) / samples, `sandbox sample ${sample + 1} of ${samples}`);
      }
      return { images, meta: { engine: 'sandbox', sandbox: true, seed: job.seed, width, height } };
    },
    close: () => drawing.close(),
  };
}

/** The request's size, else the endpoint's default size, else 1024 × 1024. */
export function outputSize(job: Pick<EngineJob, 'pipeline' | 'input'>): { width: number; height: number } {
  const properties = (
    endpointByPath(job.pipeline)?.request as { properties?: Record<string, { default?: unknown }> }
  )?.properties;
  const pick = (field: 'width' | 'height') =>
    positiveInteger(job.input[field]) ?? positiveInteger(properties?.[field]?.default) ?? FALLBACK_SIZE;
  return { width: pick('width'), height: pick('height') };
}

function sampleCount(job: EngineJob): number {
  return Math.min(MAX_SAMPLES, positiveInteger(job.input.samples) ?? 1);
}

/** The sample as a PNG (sharp encodes on libuv's threads, off the event loop too). */
async function encodeSample(pixels: SamplePixels, width: number, height: number): Promise<OutputImage> {
  const data = await sharp(asBuffer(pixels.background), { raw: { width, height, channels: 3 } })
    .composite([{ input: asBuffer(pixels.overlay), raw: { width, height, channels: 4 } }])
    .png({ compressionLevel: 6, adaptiveFiltering: false })
    .toBuffer();
  return { data, contentType: 'image/png', width, height };
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}
