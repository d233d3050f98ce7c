/**
 * `@imagegen/engine-cpu/engine`: the cpu engine itself, its face check and its NSFW checker, and
 * what it runs for each pipeline. The engine's module imports it when it builds the engine; the
 * models and their native runtimes load later still, on a first job (or IMAGEGEN_CPU_PRELOAD).
 */
export { type CpuEngineOptions, createCpuEngine, superresolutionModel } from './cpu-engine.ts';
export { CPU_PIPELINE_MODELS, CPU_PIPELINES, type CpuPipeline } from './cpu-pipelines.ts';
export { facePreflight } from './face-preflight.ts';
// The engine benchmark runs UpscalerJS on the very weights and tfjs runtime the engine uses.
export { esrganModelJson } from './model-files.ts';
export {
  type EsrganChoice,
  modelScaleFor,
  SUPERRESOLUTION_MODEL_MAP,
  UPSCALER_DEBLUR,
} from './model-table.ts';
export { createSafetyChecker, isUnsafe } from './safety-checker.ts';
export { tfjs } from './tfjs-runtime.ts';
