export { createSandboxEngine, drawingPipelines, type SandboxEngineOptions } from './sandbox-engine.ts';
