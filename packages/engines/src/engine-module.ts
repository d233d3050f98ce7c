import type { DescriptionNotes } from '@imagegen/contract';
import type { Engine, ModelSource, Pipeline, Preflight, SafetyChecker } from './engine.ts';

/**
 * An engine package's whole face to the program that starts the roles: what the engine is called,
 * what it serves and needs, and how it is built from the process's settings. Each engine package
 * exports one as its main entry, which imports nothing of the engine itself: a process loads an
 * engine's code only when it builds that engine, and its tables only when it reads its catalogue (to
 * print it, or for the notes an API that serves the engine appends to its descriptions).
 * The program hands its list to `setUpEngines` and the catalogue; no engine package imports another.
 */
export interface EngineModule {
  readonly name: string;
  /** true: real models; false: labelled placeholders for integration work. */
  readonly real: boolean;
  /** What the engine serves and needs, as the catalogue prints it: data, never a model. */
  catalogue(): Promise<EngineCatalogue>;
  /**
   * Whether the default order (IMAGEGEN_ENGINES unset) has this engine under these settings:
   * the cpu and sandbox engines always, the comfyui engine when COMFYUI_URLS names servers.
   */
  enabledByDefault(env: EngineEnv): boolean;
  /**
   * Builds the engine. A malformed setting throws (start-up stops, naming it); an engine that
   * cannot run here answers why, and start-up goes on without it (its pipelines then have no
   * engine, rather than another engine's output). Heavy runtimes are imported here, never at
   * module load, so a process that does not build the engine never loads them.
   */
  build(settings: EngineSettings): Promise<BuiltEngine | { readonly unavailable: string }>;
}

export type EngineEnv = Readonly<Record<string, string | undefined>>;

/** What building an engine reads: the settings, and what the process lends it. */
export interface EngineSettings {
  readonly env: EngineEnv;
  /** Hears of the engine's servers going down and coming back. */
  readonly log?: (line: string) => void;
  /** The server's SSRF-safe fetcher, for engines that download model files (load_model). */
  readonly fetchModel?: ModelSource;
}

/** A built engine, with the checks it adds to every job of its kind. */
export interface BuiltEngine {
  readonly engine: Engine;
  /** Checks of a job's inputs before it runs (e.g. that a face field shows a face). */
  readonly preflights?: readonly Preflight[];
  /** The output check of the process (one: the first engine that brings one). */
  readonly safety?: SafetyChecker;
}

/** What a module's `catalogue()` answers: what the engine serves and needs. */
export interface EngineCatalogue {
  readonly pipelines: readonly Pipeline[];
  /** Per pipeline, what the engine runs (Markdown), where it runs something real. */
  readonly runs?: Readonly<Record<string, string>>;
  readonly servers?: EngineServers;
  /**
   * What the engine does with requests that the contract's words leave open, appended to them
   * where a process serves the engine (its /openapi.json) and in the docs: per pipeline path, after
   * the operation's description; per field, after the field's description (in every schema, or in
   * the one schema whose title scopes it, request or response). Its own facts (the weights it runs,
   * its checks' thresholds), so the contract states none of them.
   */
  readonly notes?: DescriptionNotes;
}

/** An engine as the catalogue describes it, with nothing built: its module's name and kind, and its catalogue. */
export interface EngineEntry extends EngineCatalogue, Pick<EngineModule, 'name' | 'real'> {}

/** An engine that runs on servers of its own: the setting that names them, and what each pipeline needs there. */
export interface EngineServers {
  readonly setting: string;
  readonly needs: Readonly<Record<string, ServerRequirements>>;
}

/** What a pipeline needs on an engine's servers, for the docs and for skipping what a server lacks. */
export interface ServerRequirements {
  /** Node classes the graphs use (core or from a node pack of `packs`). */
  readonly nodes: readonly string[];
  /** The custom node packs those classes come from, where any does: installed on the servers. */
  readonly packs?: readonly {
    readonly name: string;
    readonly repository: string;
    /** The request fields that need the pack; absent: every request does. */
    readonly when?: string;
  }[];
  /** Model folders (`checkpoints`, `upscale_models`, `loras`…) and what must be in them. */
  readonly models: readonly { readonly folder: string; readonly what: string }[];
  /**
   * Request fields the graph cannot honour (or not with some values): the task fails naming the
   * field, for the reason given here, which the docs print. The engine refuses with these same words.
   */
  readonly refuses?: readonly Refusal[];
  /**
   * Request fields the graph takes no notice of in some case, as the original service's own
   * implementation took none (guidance on a guidance-distilled model, `strength` without a picture
   * to start from): the task runs, and its status's `notes` name the field, for the reason given
   * here, which the docs print. The engine notes the task in these same words.
   */
  readonly ignores?: readonly Refusal[];
}

/** A request field an engine refuses or ignores, and why (the words of the task's error or note). */
export interface Refusal {
  readonly field: string;
  readonly why: string;
}
