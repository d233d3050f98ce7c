/**
 * `@imagegen/engine-comfyui/engine`: the comfyui engine, built from COMFYUI_URLS and
 * COMFYUI_CHECKPOINTS (README.md says how its parts fit: compilers, client, pool, engine). The
 * engine's module imports it when it builds the engine.
 */
import type { Engine, ModelSource } from '@imagegen/engines';
import { createComfyClient } from './client/index.ts';
import { createComfyuiEngine } from './comfyui-engine.ts';
import {
  parseCheckpointSettings,
  parseModelMaxBytes,
  parseModelsDir,
  parseServerList,
  parseStallMs,
} from './comfyui-settings.ts';
import { COMPILERS } from './compilers/index.ts';
import { ModelBudget, parseModelsBudget } from './model-budget.ts';
import { readManifest } from './model-manifest.ts';
import { parseWarmup } from './warm-up.ts';

export { PROMPT_STYLES, type PromptStyle } from './chains/prompt-styles.ts';
export {
  BUILT_IN_FAMILIES,
  CHECKPOINT_FAMILIES,
  CHECKPOINT_ROLES,
  type CheckpointFamily,
  type CheckpointRole,
} from './checkpoint-roles.ts';
export { type ComfyClientOptions, createComfyClient } from './client/index.ts';
export { type ComfyuiEngineOptions, createComfyuiEngine } from './comfyui-engine.ts';
export {
  type CheckpointSettings,
  type ModelFolders,
  parseCheckpointSettings,
  parseCheckpoints,
  parseModelMaxBytes,
  parseModelsDir,
  parseServerList,
  parseStallMs,
  type ServerEntry,
} from './comfyui-settings.ts';
export { COMFYUI_PIPELINES, COMPILERS, compilerFor } from './compilers/index.ts';
export * from './contracts.ts';
export type { ModelFileOptions } from './model-tasks.ts';
export { ALL_NODE_PACKS, type NodePack } from './node-packs.ts';

/**
 * The engine for the servers COMFYUI_URLS lists; throws, naming the setting, when a value is
 * malformed. With COMFYUI_MODELS_DIR it stores model files, downloaded through `fetchModel`:
 * the owners' (within COMFYUI_MODELS_BUDGET) and the operator's manifest (COMFYUI_MODEL_MANIFEST).
 * COMFYUI_WARMUP says what each server runs first.
 */
export function comfyuiEngineFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  log?: (line: string) => void,
  fetchModel?: ModelSource,
): Engine {
  const servers = parseServerList(env.COMFYUI_URLS);
  if (servers.length === 0) throw new Error('COMFYUI_URLS names no server');
  const folders = parseModelsDir(env.COMFYUI_MODELS_DIR, servers);
  const maxBytes = parseModelMaxBytes(env.MODEL_MAX_BYTES);
  const stallMs = parseStallMs(env.COMFYUI_STALL_SECONDS);
  if (folders && !fetchModel)
    throw new Error('COMFYUI_MODELS_DIR is set, but this process has no model fetcher');
  const checkpointSettings = parseCheckpointSettings(env.COMFYUI_CHECKPOINTS);
  const manifestFile = env.COMFYUI_MODEL_MANIFEST?.trim();
  const manifest = manifestFile ? readManifest(manifestFile) : undefined;
  if (manifest && !folders) {
    throw new Error('COMFYUI_MODEL_MANIFEST is set, but COMFYUI_MODELS_DIR names no folder to fetch it into');
  }
  const budgetBytes = parseModelsBudget(env.COMFYUI_MODELS_BUDGET);
  if (budgetBytes !== null && !folders) {
    throw new Error('COMFYUI_MODELS_BUDGET is set, but COMFYUI_MODELS_DIR names no model folder');
  }
  const warmup = parseWarmup(env.COMFYUI_WARMUP, checkpointSettings.checkpoints);
  // Never evicted: the manifest's files and the checkpoints the settings map.
  const kept = new Set([
    ...(manifest ?? []).map((entry) => `${entry.folder}/${entry.name}`),
    ...Object.values(checkpointSettings.checkpoints).flatMap((file) => [
      `checkpoints/${file}`,
      `diffusion_models/${file}`,
    ]),
  ]);
  const budget =
    folders && budgetBytes !== null
      ? new ModelBudget(folders, budgetBytes, kept, log ?? (() => {}))
      : undefined;
  return createComfyuiEngine({
    ...(folders && fetchModel
      ? { modelFiles: { folders, maxBytes, fetch: fetchModel, ...(budget ? { budget } : {}) } }
      : {}),
    servers: servers.map((server) => createComfyClient({ url: server.url, name: server.name, stallMs })),
    compilers: COMPILERS,
    ...checkpointSettings,
    ...(manifest ? { manifest } : {}),
    warmup,
    ...(log ? { pool: { log }, log } : {}),
  });
}
