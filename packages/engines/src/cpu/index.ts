export { CPU_PIPELINES, type CpuEngineOptions, createCpuEngine, superresolutionModel } from './cpu-engine.ts';
export { FACE_FIELDS, facePreflight } from './face-preflight.ts';
export {
  type EsrganChoice,
  modelScaleFor,
  SUPERRESOLUTION_MODEL_MAP,
  UPSCALER_DEBLUR,
} from './model-table.ts';
export { createSafetyChecker, isUnsafe, UNSAFE_RULE } from './safety-checker.ts';
