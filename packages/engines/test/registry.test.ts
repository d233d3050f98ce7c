import { describe, expect, it } from 'vitest';
import type { Engine } from '../src/engine.ts';
import { createEngineRegistry, engineConfigFromEnv, registersWithoutEngine } from '../src/registry.ts';

/** An engine that only names its pipelines: the registry never runs it. */
function namedEngine(name: string, pipelines: string[]): Engine {
  return {
    name,
    pipelines,
    run: () => Promise.reject(new Error(`${name} is not run in these tests`)),
  };
}

const cpu = namedEngine('cpu', ['/bgremover/v1', '/superresolution/v1']);
/** The default order of these tests' settings, as the shipped modules would give it. */
const DEFAULTS = ['cpu', 'sandbox'];
const sandbox = namedEngine('sandbox', ['/sd/text2image/v1', '/bgremover/v1', '/superresolution/v1']);

describe('the engine registry', () => {
  it('gives a pipeline to the first enabled engine that serves it', () => {
    const registry = createEngineRegistry(
      [sandbox, cpu],
      engineConfigFromEnv({ IMAGEGEN_ENGINES: 'cpu,sandbox' }, DEFAULTS),
    );
    expect(registry.engineFor('/bgremover/v1')?.name).toBe('cpu');
    expect(registry.engineFor('/sd/text2image/v1')?.name).toBe('sandbox');
    expect(registry.engineFor('/faceswap/v1')).toBeUndefined();
  });

  it('honours a pipeline pinned to an engine', () => {
    const config = engineConfigFromEnv(
      {
        IMAGEGEN_ENGINES: 'cpu,sandbox',
        IMAGEGEN_PIPELINE_ENGINES: '/superresolution/v1=sandbox',
      },
      DEFAULTS,
    );
    const registry = createEngineRegistry([sandbox, cpu], config);
    expect(registry.engineFor('/superresolution/v1')?.name).toBe('sandbox');
    expect(registry.describe()).toEqual([
      { name: 'cpu', pipelines: ['/bgremover/v1'] },
      { name: 'sandbox', pipelines: ['/sd/text2image/v1', '/superresolution/v1'] },
    ]);
  });

  it('serves nothing through engines that are available but not enabled', () => {
    const registry = createEngineRegistry(
      [sandbox, cpu],
      engineConfigFromEnv({ IMAGEGEN_ENGINES: 'cpu' }, DEFAULTS),
    );
    expect(registry.engineFor('/sd/text2image/v1')).toBeUndefined();
    expect(registry.describe().map((e) => e.name)).toEqual(['cpu']);
  });

  it('defaults to the one default order: the cpu engine, then the sandbox', () => {
    expect(engineConfigFromEnv({}, DEFAULTS)).toEqual({ enabled: ['cpu', 'sandbox'], pinned: {} });
    const registry = createEngineRegistry([sandbox, cpu], engineConfigFromEnv({}, DEFAULTS));
    expect(registry.engineFor('/bgremover/v1')?.name).toBe('cpu');
    expect(registry.engineFor('/sd/text2image/v1')?.name).toBe('sandbox');
  });

  it('names the load_model kind of the contract as registering a model without an engine', () => {
    expect(registersWithoutEngine('/load_model/v1')).toBe(true);
    expect(registersWithoutEngine('/sync_model/v1')).toBe(true);
    expect(registersWithoutEngine('/train_model/v1')).toBe(false);
    expect(registersWithoutEngine('/sd/text2image/v1')).toBe(false);
  });

  it('starts each enabled engine once, and closes them', async () => {
    const calls: string[] = [];
    const counted = (engine: Engine): Engine => ({
      ...engine,
      start: async () => void calls.push(`start ${engine.name}`),
      close: async () => void calls.push(`close ${engine.name}`),
    });
    const registry = createEngineRegistry(
      [counted(sandbox), counted(cpu)],
      engineConfigFromEnv({ IMAGEGEN_ENGINES: 'sandbox' }, DEFAULTS),
    );
    await Promise.all([registry.start(), registry.start()]);
    await registry.close();
    expect(calls).toEqual(['start sandbox', 'close sandbox']);
  });

  it('says what the engines still starting are doing (readiness shows it), and their figures', () => {
    let comfyui: string | null = 'fetching models (1 of 2: loras/a.safetensors)';
    const registry = createEngineRegistry(
      [
        {
          ...namedEngine('comfyui', ['/sd/text2image/v1']),
          startup: () => comfyui,
          figures: () => ({ models: { bytes: 5, budgetBytes: 9, evictions: 1 } }),
        },
        { ...cpu, startup: () => null },
        sandbox,
      ],
      engineConfigFromEnv({ IMAGEGEN_ENGINES: 'comfyui,cpu,sandbox' }, DEFAULTS),
    );
    expect(registry.startup()).toBe('comfyui: fetching models (1 of 2: loras/a.safetensors)');
    expect(registry.describe()[0]!.figures).toEqual({ models: { bytes: 5, budgetBytes: 9, evictions: 1 } });
    comfyui = null;
    expect(registry.startup()).toBeNull();
  });

  it('takes the default order only when IMAGEGEN_ENGINES names no engine', () => {
    const defaults = ['comfyui', 'cpu', 'sandbox'];
    expect(engineConfigFromEnv({}, defaults).enabled).toEqual(defaults);
    expect(engineConfigFromEnv({ IMAGEGEN_ENGINES: ' , ' }, defaults).enabled).toEqual(defaults);
    expect(engineConfigFromEnv({ IMAGEGEN_ENGINES: 'sandbox' }, defaults).enabled).toEqual(['sandbox']);
  });

  it("adds up the enabled engines' capacities and lists their servers for /health and routing", () => {
    const server = (name: string, state: 'up' | 'down') => ({
      name,
      url: `http://${name}:8188`,
      state,
      queue: 0,
      inFlight: 0,
      checkpoint: null,
    });
    const gpus: Engine = {
      ...namedEngine('comfyui', ['/sd/text2image/v1']),
      capacity: 9,
      servers: () => [server('gpu-1', 'up'), server('gpu-1', 'down'), server('gpu-2', 'up')],
    };
    const registry = createEngineRegistry(
      [gpus, { ...cpu, capacity: 2 }, sandbox],
      engineConfigFromEnv({}, ['comfyui', ...DEFAULTS]),
    );
    expect(registry.capacity()).toBe(11);
    expect(registry.serverNames()).toEqual(['gpu-1', 'gpu-2']);
    expect(registry.describe()[0]).toEqual({
      name: 'comfyui',
      pipelines: ['/sd/text2image/v1'],
      servers: [server('gpu-1', 'up'), server('gpu-1', 'down'), server('gpu-2', 'up')],
    });
    expect(registry.describe()[1]).not.toHaveProperty('servers');
    const plain = createEngineRegistry([sandbox, cpu], engineConfigFromEnv({}, DEFAULTS));
    expect([plain.capacity(), plain.serverNames()]).toEqual([0, []]);
  });

  it('refuses configuration naming an unknown engine or a malformed pin', () => {
    expect(() =>
      createEngineRegistry([sandbox], engineConfigFromEnv({ IMAGEGEN_ENGINES: 'comfyui' }, DEFAULTS)),
    ).toThrow('engine "comfyui" is configured but not available (available: sandbox)');
    expect(() => engineConfigFromEnv({ IMAGEGEN_PIPELINE_ENGINES: '/bgremover/v1' }, DEFAULTS)).toThrow(
      /not <pipeline>=<engine>/,
    );
    expect(() =>
      createEngineRegistry(
        [sandbox, cpu],
        engineConfigFromEnv(
          { IMAGEGEN_ENGINES: 'sandbox', IMAGEGEN_PIPELINE_ENGINES: '/bgremover/v1=cpu' },
          DEFAULTS,
        ),
      ),
    ).toThrow(/pinned to engine "cpu", which is not enabled/);
  });
});
