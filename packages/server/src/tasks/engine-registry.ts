import type { Engine } from '@imagegen/engines';
import type { EngineRegistry } from './types.ts';

export interface EngineConfig {
  /** Engine names in order of preference (IMAGEGEN_ENGINES). */
  readonly enabled: readonly string[];
  /** Pipelines pinned to one engine (IMAGEGEN_PIPELINE_ENGINES), e.g. `/bgremover/v1` → `cpu`. */
  readonly pinned: Readonly<Record<string, string>>;
}

/**
 * Reads IMAGEGEN_ENGINES (`cpu,sandbox`; default `defaults`) and IMAGEGEN_PIPELINE_ENGINES
 * (`/bgremover/v1=cpu,/sd/text2image/v1=sandbox`).
 */
export function engineConfigFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
  defaults: readonly string[] = ['sandbox'],
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
  return { enabled: enabled.length > 0 ? enabled : defaults, pinned };
}

/**
 * Which engine serves which pipeline: a pinned pipeline goes to its engine; any other to the
 * first enabled engine that serves it. A pipeline nobody serves has no engine, and its tasks fail
 * with `no engine serves <pipeline>` rather than borrow another engine's output.
 *
 * `available` are the engines this process can build; configuration names which of them run.
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

  const engineFor = (pipeline: string): Engine | undefined => {
    const pinnedName = config.pinned[pipeline];
    if (pinnedName !== undefined) {
      const engine = byName.get(pinnedName);
      return engine?.pipelines.includes(pipeline) ? engine : undefined;
    }
    return enabled.find((engine) => engine.pipelines.includes(pipeline));
  };

  let started: Promise<void> | undefined;
  return {
    engineFor,
    describe: () =>
      enabled.map((engine) => ({
        name: engine.name,
        pipelines: engine.pipelines.filter((pipeline) => engineFor(pipeline) === engine),
      })),
    start() {
      started ??= Promise.all(enabled.map((engine) => engine.start?.())).then(() => {});
      return started;
    },
    async close() {
      await Promise.all(enabled.map((engine) => engine.close?.()));
    },
  };
}
