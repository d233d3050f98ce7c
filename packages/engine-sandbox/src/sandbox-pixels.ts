import type { EngineJob } from '@imagegen/engines';
import { drawLabel, layoutLabel } from './sandbox-label.ts';

/**
 * The pixels of one sandbox image, without encoding: its background and its label, drawn in plain
 * JavaScript loops. The engine runs this on a worker thread (sandbox-thread.ts), so a large image
 * or a long prompt never holds the event loop of the process that also answers the API.
 */

export interface SampleRequest {
  readonly pipeline: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly seed: number;
  readonly sample: number;
  readonly samples: number;
  readonly width: number;
  readonly height: number;
}

export interface SamplePixels {
  /** width × height × 3 (RGB). */
  readonly background: Uint8Array;
  /** width × height × 4 (RGBA): the label to lay over the background. */
  readonly overlay: Uint8Array;
}

export function renderSample(request: SampleRequest): SamplePixels {
  const { width, height, seed, sample, samples } = request;
  const layout = layoutLabel(width, height, facts(request, sample, samples, width, height));
  return { background: background(width, height, seed, sample), overlay: drawLabel(width, height, layout) };
}

/** What the label lists under its title. */
export function facts(
  job: Pick<EngineJob, 'pipeline' | 'input' | 'seed'>,
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

function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
