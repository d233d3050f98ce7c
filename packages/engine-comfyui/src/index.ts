/**
 * `@imagegen/engine-comfyui`: diffusion on ComfyUI servers (README.md). This entry is the engine's
 * module: importing it loads none of the engine (compilers, client, pool), which is
 * `@imagegen/engine-comfyui/engine`, imported when the engine is built.
 */
import type { EngineModule } from '@imagegen/engines';

// The file side of deleting a model (COMFYUI_MODELS_DIR), for the API: no engine is built for it.
export { modelFileRemoverFromEnv } from './model-store.ts';

/**
 * The comfyui engine as the program that starts the roles sees it: first in the default order when
 * COMFYUI_URLS names servers; the pipelines it has a compiler for, and what each needs there.
 */
export const comfyuiEngineModule: EngineModule = {
  name: 'comfyui',
  real: true,
  async catalogue() {
    const { COMPILERS } = await import('./compilers/index.ts');
    return {
      pipelines: COMPILERS.map((compiler) => compiler.pipeline),
      servers: {
        setting: 'COMFYUI_URLS',
        needs: Object.fromEntries(COMPILERS.map((compiler) => [compiler.pipeline, compiler.requires])),
      },
    };
  },
  enabledByDefault: (env) => Boolean(env.COMFYUI_URLS?.trim()),
  async build({ env, log, fetchModel }) {
    if (!env.COMFYUI_URLS?.trim()) {
      return {
        unavailable:
          'IMAGEGEN_ENGINES names comfyui, but COMFYUI_URLS names no server; its pipelines have no engine',
      };
    }
    const { comfyuiEngineFromEnv } = await import('./engine-api.ts');
    return { engine: comfyuiEngineFromEnv(env, log, fetchModel) };
  },
};
