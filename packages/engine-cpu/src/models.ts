import type { OpMap, OpName } from './inference-protocol.ts';
import { ESRGAN_NATIVE_SCALES, SUPERRESOLUTION_MODEL_MAP, UPSCALER_DEBLUR } from './model-table.ts';

/**
 * The models the inference threads load, by name: the pool places jobs by these names, and
 * IMAGEGEN_CPU_PRELOAD names them. A thread loads a model the first time it runs a job that needs
 * it (or at start when the setting names it) and keeps it for the thread's life.
 */

const ESRGAN_SIZES = [
  ...new Set([...Object.values(SUPERRESOLUTION_MODEL_MAP).map((c) => c.size), UPSCALER_DEBLUR.size]),
];

/** Every model a cpu pipeline runs, in the order `all` preloads them. */
export const CPU_MODELS: readonly string[] = [
  'isnet-medium',
  ...ESRGAN_SIZES.flatMap((size) => ESRGAN_NATIVE_SCALES.map((scale) => `esrgan-${size}-x${scale}`)),
  'nsfw',
  'human',
  'human-objects',
];

/** The model an op needs, or undefined for ops that need none (alpha matting, loading itself). */
export function modelFor<K extends OpName>(op: K, args: OpMap[K]['args']): string | undefined {
  switch (op) {
    case 'isnet-mask':
      return 'isnet-medium';
    case 'esrgan-patch': {
      const { size, scale } = args as OpMap['esrgan-patch']['args'];
      return `esrgan-${size}-x${scale}`;
    }
    case 'nsfw':
      return 'nsfw';
    case 'faces':
      return 'human';
    case 'objects':
      return 'human-objects';
    default:
      return undefined;
  }
}

/**
 * How many threads may hold a model. ISNet runs on onnxruntime, whose session spreads one run over
 * every core by itself and holds about 830 MB once it has run (weights and activation arena): a
 * second copy on another thread made bursts slower, not faster (6 removals at 1024 px at once on
 * 2 cores: 17.0 s on one session, 22.0 s on two, medians of 4), so one thread holds it and ISNet
 * jobs queue for that thread. The tfjs models (ESRGAN, nsfwjs, human) run single-threaded WASM:
 * upscaling patches need every thread.
 */
export function threadsFor(model: string, poolSize: number): number {
  return model === 'isnet-medium' ? 1 : poolSize;
}

/**
 * IMAGEGEN_CPU_PRELOAD: model names separated by commas, or `all`; unset or empty loads nothing
 * ahead (each model loads on first use). Unknown names are refused, so a typo does not silently
 * leave the first request to pay for the load.
 */
export function parsePreload(setting: string | undefined): string[] {
  const names = (setting ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.includes('all')) return [...CPU_MODELS];
  const unknown = names.filter((name) => !CPU_MODELS.includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `IMAGEGEN_CPU_PRELOAD names unknown model ${unknown.join(', ')}; known: all, ${CPU_MODELS.join(', ')}`,
    );
  }
  return [...new Set(names)];
}

/** How long idle inference threads keep their models when IMAGEGEN_CPU_KEEP_ALIVE_MS is unset: 5 minutes. */
export const DEFAULT_KEEP_ALIVE_MS = 5 * 60_000;

/**
 * IMAGEGEN_CPU_KEEP_ALIVE_MS: how long a thread with nothing to do keeps its models before it
 * stops and gives their memory back; `-1` keeps them as long as the process runs, `0` releases
 * them after every job. Anything else is refused, so a typo does not silently keep 2 GB resident.
 */
export function parseKeepAlive(setting: string | undefined): number {
  const text = (setting ?? '').trim();
  if (text === '') return DEFAULT_KEEP_ALIVE_MS;
  if (text === '-1') return Number.POSITIVE_INFINITY;
  if (!/^\d+$/.test(text)) {
    throw new Error(
      `IMAGEGEN_CPU_KEEP_ALIVE_MS must be a whole number of milliseconds or -1 (keep), not ${JSON.stringify(setting)}`,
    );
  }
  return Number(text);
}
