/**
 * @imagegen/engines: what every engine shares. The one narrow interface between the queue worker
 * and whatever computes images (engine.ts); the face an engine package shows the program that
 * starts the roles (engine-module.ts: its name, what it serves and needs, how it is built); which
 * engine serves which pipeline (registry.ts, from configuration); the catalogue the docs print
 * (catalog.ts); building the configured engines from the modules handed in (engine-setup.ts); and
 * worker threads (`@imagegen/engines/threads`). The engines themselves are packages of their own
 * (`@imagegen/engine-cpu`, `@imagegen/engine-sandbox`, `@imagegen/engine-comfyui`), none of which
 * imports another. ARCHITECTURE.md (at the repository root) says where an engine fits.
 */
export {
  type AnswerKind,
  defaultEngineOrder,
  type EngineCatalog,
  type EngineListing,
  engineCatalog,
  engineEntries,
  engineListing,
  engineNotes,
  type PathAnswer,
  placeholderEngineNames,
  servedEngineNotes,
} from './catalog.ts';
export * from './engine.ts';
export * from './engine-module.ts';
export { type EngineSetup, setUpEngines } from './engine-setup.ts';
export {
  createEngineRegistry,
  type EngineConfig,
  type EngineDescription,
  type EngineRegistry,
  engineConfigFromEnv,
  registersWithoutEngine,
  type ServesPipelines,
  servingEngine,
} from './registry.ts';
