import { defaultEngineOrder } from './catalog.ts';
import type { Engine, ModelSource, Preflight, SafetyChecker } from './engine.ts';
import type { EngineModule } from './engine-module.ts';
import { createEngineRegistry, type EngineRegistry, engineConfigFromEnv } from './registry.ts';

export interface EngineSetup {
  registry: EngineRegistry;
  preflights: Preflight[];
  safety?: SafetyChecker;
  warnings: string[];
}

/**
 * The engines this process runs, from the modules the program ships, IMAGEGEN_ENGINES (default:
 * the modules the settings enable by default, in the order given) and IMAGEGEN_PIPELINE_ENGINES.
 * Only the engines named are built, so an engine left out never loads its runtime. An engine that
 * cannot run here is left out with a warning, so a pipeline it would serve fails with
 * `no engine serves <pipeline>` rather than with another engine's output; a malformed setting
 * stops start-up. `log` hears of engines' servers going down and coming back; `fetchModel` (the
 * server's SSRF-safe fetcher) downloads load_model's files.
 */
export async function setUpEngines(
  modules: readonly EngineModule[],
  env: Readonly<Record<string, string | undefined>> = process.env,
  log?: (line: string) => void,
  fetchModel?: ModelSource,
): Promise<EngineSetup> {
  const config = engineConfigFromEnv(env, defaultEngineOrder(modules, env));
  const available: Engine[] = [];
  const preflights: Preflight[] = [];
  const warnings: string[] = [];
  let safety: SafetyChecker | undefined;
  for (const name of config.enabled) {
    const module = modules.find((candidate) => candidate.name === name);
    if (!module) {
      warnings.push(`IMAGEGEN_ENGINES names unknown engine "${name}"`);
      continue;
    }
    if (available.some((engine) => engine.name === name)) continue;
    const built = await module.build({ env, ...(log ? { log } : {}), ...(fetchModel ? { fetchModel } : {}) });
    if ('unavailable' in built) {
      warnings.push(built.unavailable);
      continue;
    }
    available.push(built.engine);
    preflights.push(...(built.preflights ?? []));
    safety ??= built.safety;
  }
  const known = new Set(available.map((engine) => engine.name));
  const enabled = config.enabled.filter((name) => known.has(name));
  const registry = createEngineRegistry(available, { enabled, pinned: config.pinned });
  return { registry, preflights, ...(safety ? { safety } : {}), warnings };
}
