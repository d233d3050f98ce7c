/**
 * The engines of the recording's stage: the ones `npm start` would run with the comfyui engine
 * enabled, each wrapped so that the recorder can hold a job at its door, and what the fake
 * ComfyUI must hold for the examples' graphs.
 */

import { modelFilesOf } from '@imagegen/comfyui-fake';
import { compileRequestValidator, endpointByPath } from '@imagegen/contract';
import { comfyuiEngineModule } from '@imagegen/engine-comfyui';
import { type ApiPrompt, COMPILERS } from '@imagegen/engine-comfyui/engine';
import { cpuEngineModule } from '@imagegen/engine-cpu';
import { sandboxEngineModule } from '@imagegen/engine-sandbox';
import {
  type Engine,
  EngineInputError,
  type EngineJob,
  type EngineRegistry,
  type Preflight,
  type RunContext,
  type SafetyChecker,
  setUpEngines,
} from '@imagegen/engines';
import { createModelFetcher } from '@imagegen/server';

/** What the worker is given of the engines: the registry, and the cpu engine's checks. */
export interface StageEngines {
  readonly registry: EngineRegistry;
  readonly preflights: readonly Preflight[];
  readonly safety: SafetyChecker;
}

/**
 * The engines exactly as `npm start` builds them (`setUpEngines`) for
 * `IMAGEGEN_ENGINES=cpu,comfyui,sandbox` and these ComfyUI settings; with a models folder the
 * comfyui engine serves training too. The one difference: model downloads may reach the stand-in
 * for the public web on loopback (every other private address is still refused).
 */
export async function stageEngines(comfyui: Readonly<Record<string, string>>): Promise<StageEngines> {
  const setup = await setUpEngines(
    [cpuEngineModule, comfyuiEngineModule, sandboxEngineModule],
    { IMAGEGEN_ENGINES: 'cpu,comfyui,sandbox', ...comfyui },
    undefined,
    createModelFetcher({ allowPrivate: true }),
  );
  if (setup.warnings.length > 0 || !setup.safety) {
    throw new Error(`the stage's engines did not all start: ${setup.warnings.join('; ')}`);
  }
  return { registry: setup.registry, preflights: setup.preflights, safety: setup.safety };
}

/** The engine registry of the stage, whose engines wait at their door for the recorder. */
export interface HeldRegistry extends EngineRegistry {
  /** The next job to reach an engine waits there until `open()`. */
  arm(): Door;
}

interface Door {
  /** Whether a job waits at the door now (or went through it). */
  readonly reached: boolean;
  open(): void;
}

export function heldAtTheDoor(registry: EngineRegistry): HeldRegistry {
  let next: { reached: boolean; opened: Promise<void>; open: () => void } | undefined;
  // The worker asks an engine only for its name and to run a job (the API asks the registry to admit).
  const held = (engine: Engine): Engine => ({
    name: engine.name,
    pipelines: engine.pipelines,
    run: async (job: EngineJob, ctx: RunContext) => {
      const door = next;
      next = undefined;
      if (door) {
        door.reached = true;
        await door.opened;
      }
      return engine.run(job, ctx);
    },
  });
  const wrapped = new Map<Engine, Engine>();
  return {
    describe: () => registry.describe(),
    capacity: () => registry.capacity(),
    serverNames: () => registry.serverNames(),
    admit: (pipeline, input) => registry.admit(pipeline, input),
    start: () => registry.start(),
    startup: () => registry.startup(),
    close: () => registry.close(),
    engineFor(pipeline) {
      const engine = registry.engineFor(pipeline);
      if (!engine) return undefined;
      if (!wrapped.has(engine)) wrapped.set(engine, held(engine));
      return wrapped.get(engine);
    },
    arm() {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => {
        open = resolve;
      });
      const door = { reached: false, opened, open };
      next = door;
      return {
        get reached() {
          return door.reached;
        },
        open,
      };
    },
  };
}

/**
 * The model files the fake ComfyUI must list for the examples' graphs: each comfyui endpoint's
 * example compiled as the engine would compile it, with the default checkpoints.
 */
export function comfyuiModelFiles(): Record<string, string[]> {
  const all = new Map<string, Set<string>>();
  for (const compiler of COMPILERS) {
    const endpoint = endpointByPath(compiler.pipeline);
    if (!endpoint?.example) continue;
    const validated = compileRequestValidator(endpoint)(structuredClone(endpoint.example));
    if (!validated.ok) throw new Error(`${endpoint.path}: the contract refuses its own example`);
    const images = Object.fromEntries(
      endpoint.imageFields
        .filter((field) => validated.value[field] !== undefined)
        .map((field) => {
          const value = validated.value[field];
          return [field, Array.isArray(value) ? value.map((_, n) => `${field}-${n}.png`) : `${field}.png`];
        }),
    );
    let prompt: ApiPrompt;
    try {
      prompt = compiler.compile({
        input: validated.value,
        seed: 1,
        images,
        filenamePrefix: 'imagegen/examples/img',
        checkpoints: {},
      }).prompt;
    } catch (error) {
      // The engine refuses the example (a field it does not serve): the task fails before any graph is sent.
      if (error instanceof EngineInputError) continue;
      throw error;
    }
    for (const [folder, files] of Object.entries(modelFilesOf(prompt))) {
      const set = all.get(folder) ?? new Set<string>();
      for (const file of files) set.add(file);
      all.set(folder, set);
    }
  }
  return Object.fromEntries([...all].map(([folder, files]) => [folder, [...files].sort()]));
}
