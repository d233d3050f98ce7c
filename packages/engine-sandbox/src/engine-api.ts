/**
 * `@imagegen/engine-sandbox/engine`: the sandbox engine itself, and the pipelines it serves. The
 * engine's module imports it when it builds the engine.
 */
export { createSandboxEngine, type SandboxEngineOptions } from './sandbox-engine.ts';
export { drawingPipelines, sandboxPipelines } from './sandbox-pipelines.ts';
export { SANDBOX_MODEL_NOTE } from './sandbox-training.ts';
