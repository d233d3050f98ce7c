import { comfyuiEngineModule } from '@imagegen/engine-comfyui';
import { cpuEngineModule } from '@imagegen/engine-cpu';
import { sandboxEngineModule } from '@imagegen/engine-sandbox';
import { type EngineModule, placeholderEngineNames } from '@imagegen/engines';

/**
 * Every engine this release ships, in order of preference: the one list that names them. The
 * default order keeps those the settings enable (comfyui only with COMFYUI_URLS), so diffusion goes
 * to ComfyUI servers when there are any, then to the cpu engine's real models, then to the
 * sandbox's placeholders. Importing an engine's module loads no runtime: only the engines a
 * process builds load theirs. Adding an engine is a package and a line here.
 */
export const SHIPPED_ENGINES: readonly EngineModule[] = [
  comfyuiEngineModule,
  cpuEngineModule,
  sandboxEngineModule,
];

/** The shipped engines that answer with labelled placeholders: the banner and the task list say so. */
export const PLACEHOLDER_ENGINES: readonly string[] = placeholderEngineNames(SHIPPED_ENGINES);
