/**
 * The comfyui engine, built from COMFYUI_URLS and COMFYUI_CHECKPOINTS (README.md says how its
 * parts fit: compilers, client, pool, engine).
 */
import type { Engine } from '../engine.ts';
import { createComfyClient } from './client/index.ts';
import { createComfyuiEngine } from './comfyui-engine.ts';
import { parseCheckpoints, parseServerList } from './comfyui-settings.ts';
import type { PipelineCompiler } from './contracts.ts';

export { createComfyuiEngine } from './comfyui-engine.ts';
export { parseCheckpoints, parseServerList } from './comfyui-settings.ts';

/** The engine for the servers COMFYUI_URLS lists; throws, naming the setting, when a value is malformed. */
export function comfyuiEngineFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  compilers: readonly PipelineCompiler[],
  log?: (line: string) => void,
): Engine {
  const servers = parseServerList(env.COMFYUI_URLS);
  if (servers.length === 0) throw new Error('COMFYUI_URLS names no server');
  return createComfyuiEngine({
    servers: servers.map((server) => createComfyClient({ url: server.url, name: server.name })),
    compilers,
    checkpoints: parseCheckpoints(env.COMFYUI_CHECKPOINTS),
    ...(log ? { pool: { log } } : {}),
  });
}
