/**
 * @imagegen/engines: the one narrow interface between the queue worker and whatever computes
 * images (engine.ts), which engine serves which pipeline (registry.ts, from configuration;
 * catalog.ts, what this release ships, which the docs print), and the engines `npm start` builds
 * (engine-setup.ts). The cpu engine and its models load only when enabled: import it from
 * `@imagegen/engines/cpu`. ARCHITECTURE.md (at the repository root) says where an engine fits.
 */
export {
  type AnswerKind,
  type EngineCatalog,
  engineCatalog,
  isPlaceholderEngine,
  type PathAnswer,
  shippedEngines,
} from './catalog.ts';
// The file side of deleting a model (COMFYUI_MODELS_DIR), for the API: no engine is loaded for it.
export { modelFileRemoverFromEnv } from './comfyui/model-store.ts';
export * from './engine.ts';
export { type EngineSetup, setUpEngines } from './engine-setup.ts';
export {
  COMFYUI_ENGINE_ORDER,
  createEngineRegistry,
  DEFAULT_ENGINE_ORDER,
  type EngineConfig,
  type EngineDescription,
  type EngineRegistry,
  engineConfigFromEnv,
  registersWithoutEngine,
} from './registry.ts';
export { createSandboxEngine } from './sandbox/index.ts';
export { SANDBOX_MODEL_NOTE } from './sandbox/sandbox-training.ts';
