import { type DescriptionNotes, endpoints, mergeNotes } from '@imagegen/contract';
import type { EngineEntry, EngineModule, ServerRequirements } from './engine-module.ts';
import { registersWithoutEngine, servingEngine } from './registry.ts';

/**
 * Which engine of a release serves which pipeline, as data: no model is loaded to read it. The
 * program that starts the roles hands in its engine modules; the docs site prints its engine notes
 * from the answers `engineCatalog()` resolves here (written as JSON at build time), so what the
 * docs promise is what runs.
 */

/** The engine names in the order the settings prefer them when IMAGEGEN_ENGINES is unset. */
export function defaultEngineOrder(
  engines: readonly EngineModule[],
  env: Readonly<Record<string, string | undefined>> = {},
): string[] {
  return engines.filter((engine) => engine.enabledByDefault(env)).map((engine) => engine.name);
}

/** Every engine's catalogue entry, in the order given. */
export function engineEntries(engines: readonly EngineModule[]): Promise<EngineEntry[]> {
  return Promise.all(
    engines.map(async (engine) => ({ name: engine.name, real: engine.real, ...(await engine.catalogue()) })),
  );
}

/**
 * The notes the named engines add to the API's descriptions, in that order (the engines a process
 * serves, or the default order the docs print).
 */
export function engineNotes(
  engines: readonly Pick<EngineEntry, 'name' | 'notes'>[],
  names: readonly string[],
): DescriptionNotes {
  return mergeNotes(
    names.flatMap((name) => engines.filter((engine) => engine.name === name)).map((e) => e.notes),
  );
}

/**
 * The notes of the engines a process serves, named in order, for its /openapi.json: only their
 * catalogues are read, so an engine the process leaves out is never asked.
 */
export async function servedEngineNotes(
  modules: readonly EngineModule[],
  names: readonly string[],
): Promise<DescriptionNotes> {
  return engineNotes(await engineEntries(modules.filter((module) => names.includes(module.name))), names);
}

/** The names of the engines that answer with labelled placeholders instead of real output (the sandbox). */
export function placeholderEngineNames(engines: readonly Pick<EngineEntry, 'name' | 'real'>[]): string[] {
  return engines.filter((engine) => !engine.real).map((engine) => engine.name);
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
export function engineListing(engines: readonly EngineEntry[]): {
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
  /** What the engines of the order add to the API's descriptions (`engineNotes`). */
  readonly notes: DescriptionNotes;
}

/**
 * The catalogue the docs print: every task path answered with the registry's own rule
 * (`servingEngine`) and an engine order (the docs print `defaultEngineOrder`'s), so the docs never
 * decide it again.
 */
export function engineCatalog(engines: readonly EngineEntry[], order: readonly string[]): EngineCatalog {
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
  return { defaultOrder: [...order], paths, serverEngines, notes: engineNotes(engines, order) };
}
