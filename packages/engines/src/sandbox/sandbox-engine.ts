import { endpointByPath } from '@imagegen/contract';
import sharp from 'sharp';
import { drawingPipelines, SANDBOX_TRAINING_PIPELINE, sandboxPipelines } from '../catalog.ts';
import type { Engine, EngineJob, EngineResult, OutputImage, RunContext } from '../engine.ts';
import { sleep } from './abortable-sleep.ts';
import { drawLabel, layoutLabel } from './sandbox-label.ts';
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
  /** Pipelines to serve (default: the catalogue's sandbox pipelines, catalog.ts). */
  readonly pipelines?: readonly string[];
  /** Simulated work per task, spread over its samples, with progress; aborts promptly. */
  readonly delayMs?: number;
  /** `/train_model/v1`: simulated time per step and its bound (sandbox-training.ts). */
  readonly training?: SandboxTrainingOptions;
}

/** The contract's default size of 1024 ("SDXL and most others"), for pipelines whose request has no size. */
const FALLBACK_SIZE = 1024;
const MAX_SAMPLES = 16;

export { drawingPipelines };

export function createSandboxEngine(options: SandboxEngineOptions = {}): Engine {
  const pipelines = options.pipelines ?? sandboxPipelines();
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
        images.push(await drawSample(job, sample, samples, width, height));
        ctx.progress((sample + 1) / samples, `sandbox sample ${sample + 1} of ${samples}`);
      }
      return { images, meta: { engine: 'sandbox', sandbox: true, seed: job.seed, width, height } };
    },
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

async function drawSample(
  job: EngineJob,
  sample: number,
  samples: number,
  width: number,
  height: number,
): Promise<OutputImage> {
  const layout = layoutLabel(width, height, facts(job, sample, samples, width, height));
  const data = await sharp(background(width, height, job.seed, sample), {
    raw: { width, height, channels: 3 },
  })
    .composite([{ input: drawLabel(width, height, layout), raw: { width, height, channels: 4 } }])
    .png({ compressionLevel: 6, adaptiveFiltering: false })
    .toBuffer();
  return { data, contentType: 'image/png', width, height };
}

/** What the label lists under its title. */
export function facts(
  job: EngineJob,
  sample: number,
  samples: number,
  width: number,
  height: number,
): string[] {
  const { prompt, negative_prompt: negative, ...rest } = job.input;
  const lines = [`pipeline: ${job.pipeline}`];
  if (typeof prompt === 'string') lines.push(`prompt: ${prompt}`);
  if (typeof negative === 'string' && negative !== '') lines.push(`negative_prompt: ${negative}`);
  lines.push(`seed: ${job.seed}   sample ${sample + 1} of ${samples}   ${width}x${height}`);
  const parameters = Object.entries(rest)
    .filter(([name, value]) => value !== null && value !== undefined && name !== 'seed')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => `${name}=${shorten(typeof value === 'string' ? value : JSON.stringify(value))}`);
  if (parameters.length > 0) lines.push(`parameters: ${parameters.join('  ')}`);
  return lines;
}

/**
 * A diagonal gradient between two colours drawn from the seed, with a faint grid: different
 * seeds and samples look different, the same seed always gives the same pixels.
 */
function background(width: number, height: number, seed: number, sample: number): Buffer {
  const random = mulberry32(hashSeed(seed, sample));
  const from = [random(), random(), random()].map((v) => 40 + Math.floor(v * 150));
  const to = [random(), random(), random()].map((v) => 40 + Math.floor(v * 150));
  const cell = Math.max(8, Math.floor(Math.min(width, height) / 8));
  const pixels = Buffer.alloc(width * height * 3);
  const span = Math.max(1, width + height - 2);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const t = (x + y) / span;
      const shade = (Math.floor(x / cell) + Math.floor(y / cell)) % 2 === 0 ? 10 : -10;
      const at = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) {
        pixels[at + c] = Math.round((from[c] as number) * (1 - t) + (to[c] as number) * t) + shade;
      }
    }
  }
  return pixels;
}

function hashSeed(seed: number, sample: number): number {
  // FNV-1a over the decimal text: seeds may exceed 32 bits.
  let hash = 0x811c9dc5;
  for (const char of `${seed}:${sample}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

function mulberry32(state: number): () => number {
  let a = state >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
