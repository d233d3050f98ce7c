export { CPU_PIPELINES, type CpuEngineOptions, createCpuEngine, superresolutionModel } from './cpu-engine.ts';
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
