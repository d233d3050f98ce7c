import type { Engine, ModelSource, Preflight, SafetyChecker } from './engine.ts';
import { createEngineRegistry, type EngineRegistry, engineConfigFromEnv } from './registry.ts';
import { createSandboxEngine } from './sandbox/index.ts';

export interface EngineSetup {
  registry: EngineRegistry;
  preflights: Preflight[];
  safety?: SafetyChecker;
  warnings: string[];
}

/**
 * The engines this process runs, from IMAGEGEN_ENGINES (default `cpu,sandbox`, or
 * `comfyui,cpu,sandbox` with COMFYUI_URLS) and IMAGEGEN_PIPELINE_ENGINES. The cpu engine (real
 * models shipped in npm packages) is loaded only when enabled; if it cannot load, start-up says so
 * and goes on with the others, so a pipeline it would serve fails with `no engine serves <pipeline>`
 * rather than with fake output. The comfyui engine runs on the ComfyUI servers of COMFYUI_URLS; a
 * malformed value stops start-up. `log` hears of its servers going down and coming back;
 * `fetchModel` (the server's SSRF-safe fetcher) downloads load_model's files into
 * COMFYUI_MODELS_DIR.
 */
export async function setUpEngines(
  env: NodeJS.ProcessEnv = process.env,
  log?: (line: string) => void,
  fetchModel?: ModelSource,
): Promise<EngineSetup> {
  const config = engineConfigFromEnv(env);
  const available: Engine[] = [];
  const preflights: Preflight[] = [];
  const warnings: string[] = [];
  let safety: SafetyChecker | undefined;
  if (config.enabled.includes('sandbox'))
    available.push(createSandboxEngine({ delayMs: sandboxDelayMs(env.SANDBOX_DELAY_MS) }));
  if (config.enabled.includes('cpu')) {
    try {
      const cpu = await import('./cpu/index.ts');
      available.push(cpu.createCpuEngine());
      preflights.push(cpu.facePreflight);
      safety = cpu.createSafetyChecker();
    } catch (error) {
      warnings.push(`engine cpu could not load (${(error as Error).message}); its pipelines have no engine`);
    }
  }
  if (config.enabled.includes('comfyui')) {
    if (env.COMFYUI_URLS?.trim()) {
      const comfyui = await import('./comfyui/index.ts');
      available.push(comfyui.comfyuiEngineFromEnv(env, log, fetchModel));
    } else {
      warnings.push(
        'IMAGEGEN_ENGINES names comfyui, but COMFYUI_URLS names no server; its pipelines have no engine',
      );
    }
  }
  const known = new Set(available.map((engine) => engine.name));
  const enabled = config.enabled.filter((name) => known.has(name));
  for (const name of config.enabled) {
    if (!known.has(name) && name !== 'cpu' && name !== 'comfyui')
      warnings.push(`IMAGEGEN_ENGINES names unknown engine "${name}"`);
  }
  const registry = createEngineRegistry(available, { enabled, pinned: config.pinned });
  return { registry, preflights, ...(safety ? { safety } : {}), warnings };
}

/**
 * SANDBOX_DELAY_MS: simulated work per sandbox task (default 0), so that a deployment can be
 * rehearsed with tasks that take time: draining on SIGTERM, several workers sharing a queue.
 */
function sandboxDelayMs(value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`SANDBOX_DELAY_MS=${value} is not a whole number of milliseconds`);
  return n;
}
