/**
 * `@imagegen/engines/comfyui`: the comfyui engine, built from COMFYUI_URLS and COMFYUI_CHECKPOINTS
 * (README.md beside this file says how its parts fit: compilers, client, pool, engine).
 */
import type { Engine } from '../engine.ts';
import { createComfyClient } from './client/index.ts';
import { createComfyuiEngine } from './comfyui-engine.ts';
import { parseCheckpoints, parseServerList } from './comfyui-settings.ts';
import { COMPILERS } from './compilers/index.ts';

export { type ComfyClientOptions, createComfyClient } from './client/index.ts';
export { type ComfyuiEngineOptions, createComfyuiEngine } from './comfyui-engine.ts';
export { parseCheckpoints, parseServerList, type ServerEntry } from './comfyui-settings.ts';
export { COMFYUI_PIPELINES, COMPILERS, compilerFor } from './compilers/index.ts';
export * from './contracts.ts';

/** The engine for the servers COMFYUI_URLS lists; throws, naming the setting, when a value is malformed. */
export function comfyuiEngineFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  log?: (line: string) => void,
): Engine {
  const servers = parseServerList(env.COMFYUI_URLS);
  if (servers.length === 0) throw new Error('COMFYUI_URLS names no server');
  return createComfyuiEngine({
    servers: servers.map((server) => createComfyClient({ url: server.url, name: server.name })),
    compilers: COMPILERS,
    checkpoints: parseCheckpoints(env.COMFYUI_CHECKPOINTS),
    ...(log ? { pool: { log } } : {}),
  });
}
