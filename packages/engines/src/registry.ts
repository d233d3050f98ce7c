import { endpointByPath } from '@imagegen/contract';
import type { Engine, EngineFigures, EngineServer, Pipeline, SubmissionRefusal } from './engine.ts';

/**
 * Which engine serves which pipeline: the one decision, for the worker, `/health` and the docs'
 * engine notes alike (catalog.ts resolves the docs' answers with the same rule).
 */

export interface EngineConfig {
  /** Engine names in order of preference (IMAGEGEN_ENGINES). */
  readonly enabled: readonly string[];
  /** Pipelines pinned to one engine (IMAGEGEN_PIPELINE_ENGINES), e.g. `/bgremover/v1` → `cpu`. */
  readonly pinned: Readonly<Record<string, string>>;
}

/**
 * Reads IMAGEGEN_ENGINES (`cpu,sandbox`; default `defaults`, the engines whose modules the
 * settings enable by default: `defaultEngineOrder`) and IMAGEGEN_PIPELINE_ENGINES
 * (`/bgremover/v1=cpu,/sd/text2image/v1=sandbox`).
 */
export function engineConfigFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  defaults: readonly string[],
): EngineConfig {
  const enabled = (env.IMAGEGEN_ENGINES ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const pinned: Record<string, string> = {};
  for (const pair of (env.IMAGEGEN_PIPELINE_ENGINES ?? '').split(',')) {
    if (!pair.trim()) continue;
    const [pipeline, engine] = pair.split('=').map((part) => part.trim());
    if (!pipeline || !engine) {
      throw new Error(`IMAGEGEN_PIPELINE_ENGINES: "${pair}" is not <pipeline>=<engine>`);
    }
    pinned[pipeline] = engine;
  }
  return { enabled: enabled.length > 0 ? enabled : [...defaults], pinned };
}

/** What the rule needs of an engine: a running one, or a catalogue entry describing one. */
export interface ServesPipelines {
  readonly name: string;
  readonly pipelines: readonly Pipeline[];
}

/**
 * The rule: a pinned pipeline goes to its engine; any other to the first enabled engine that
 * serves it. A pipeline nobody serves has no engine, and its tasks fail with
 * `no engine serves <pipeline>` rather than borrow another engine's output.
 */
export function servingEngine<E extends ServesPipelines>(
  enabled: readonly E[],
  pinned: EngineConfig['pinned'],
  pipeline: Pipeline,
): E | undefined {
  const pinnedName = pinned[pipeline];
  if (pinnedName !== undefined) {
    const engine = enabled.find((candidate) => candidate.name === pinnedName);
    return engine?.pipelines.includes(pipeline) ? engine : undefined;
  }
  return enabled.find((engine) => engine.pipelines.includes(pipeline));
}

/**
 * Model-loading paths (the contract's load_model kind: load_model, sync_model): registering a
 * model is bookkeeping, so without an engine that loads weights the worker marks the model ready
 * instead of failing the task.
 */
export function registersWithoutEngine(pipeline: Pipeline): boolean {
  return endpointByPath(pipeline)?.kind === 'load_model';
}

/** An engine as `GET /health` shows it: the pipelines it serves here, and its servers if it has any. */
export interface EngineDescription {
  name: string;
  pipelines: string[];
  servers?: EngineServer[];
  /** The engine's own figures (for `/metrics`), when it has any. */
  figures?: EngineFigures;
}

/** Which engine serves which pipeline in this process: built from configuration. */
export interface EngineRegistry {
  engineFor(pipeline: Pipeline): Engine | undefined;
  /**
   * The submission check of the engine that serves the pipeline (`Engine.admit`): the API's one
   * question to the engines about a request before it is queued. Null: admitted (also when no
   * engine serves the pipeline, or its engine checks nothing).
   */
  admit(pipeline: Pipeline, input: Readonly<Record<string, unknown>>): SubmissionRefusal | null;
  /** For `GET /health`: every configured engine and the pipelines it serves here. */
  describe(): EngineDescription[];
  /** Tasks the enabled engines take at once (their declared capacities together); 0 when none declares one. */
  capacity(): number;
  /** The names of the enabled engines' servers, each once: enterprise server ids the worker serves. */
  serverNames(): string[];
  /** Starts every engine (loads models); called by the worker before its first claim. */
  start(): Promise<void>;
  /** What the engines still starting are doing (`comfyui: fetching models (…)`), or null. */
  startup(): string | null;
  close(): Promise<void>;
}

/**
 * The registry of this process. `available` are the engines it can build; configuration names
 * which of them run, in which order, and which pipelines are pinned.
 */
export function createEngineRegistry(available: readonly Engine[], config: EngineConfig): EngineRegistry {
  const byName = new Map(available.map((engine) => [engine.name, engine]));
  const names = available.map((engine) => engine.name).join(', ') || 'none';
  const enabled = config.enabled.map((name) => {
    const engine = byName.get(name);
    if (!engine) throw new Error(`engine "${name}" is configured but not available (available: ${names})`);
    return engine;
  });
  for (const [pipeline, name] of Object.entries(config.pinned)) {
    if (!enabled.some((engine) => engine.name === name)) {
      throw new Error(`${pipeline} is pinned to engine "${name}", which is not enabled (IMAGEGEN_ENGINES)`);
    }
  }

  const engineFor = (pipeline: Pipeline) => servingEngine(enabled, config.pinned, pipeline);
  let started: Promise<void> | undefined;
  return {
    engineFor,
    admit: (pipeline, input) => engineFor(pipeline)?.admit?.(pipeline, input) ?? null,
    describe: () =>
      enabled.map((engine) => ({
        name: engine.name,
        pipelines: engine.pipelines.filter((pipeline) => engineFor(pipeline) === engine),
        ...(engine.servers ? { servers: [...engine.servers()] } : {}),
        ...(engine.figures ? { figures: engine.figures() } : {}),
      })),
    capacity: () => enabled.reduce((sum, engine) => sum + (engine.capacity ?? 0), 0),
    serverNames: () => [
      ...new Set(enabled.flatMap((engine) => engine.servers?.().map((server) => server.name) ?? [])),
    ],
    start() {
      started ??= Promise.all(enabled.map((engine) => engine.start?.())).then(() => {});
      return started;
    },
    startup() {
      const doing = enabled.flatMap((engine) => {
        const now = engine.startup?.();
        return now ? [`${engine.name}: ${now}`] : [];
      });
      return doing.length > 0 ? doing.join('; ') : null;
    },
    async close() {
      await Promise.all(enabled.map((engine) => engine.close?.()));
    },
  };
}
