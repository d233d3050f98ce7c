import { describe, expect, it } from 'vitest';
import { createEngineRegistry, engineConfigFromEnv } from '../../src/tasks/index.ts';
import { fakeEngine } from '../support/fakes.ts';

const cpu = fakeEngine('cpu', ['/bgremover/v1', '/superresolution/v1']);
const sandbox = fakeEngine('sandbox', ['/sd/text2image/v1', '/bgremover/v1', '/superresolution/v1']);

describe('the engine registry', () => {
  it('gives a pipeline to the first enabled engine that serves it', () => {
    const registry = createEngineRegistry(
      [sandbox, cpu],
      engineConfigFromEnv({ IMAGEGEN_ENGINES: 'cpu,sandbox' }),
    );
    expect(registry.engineFor('/bgremover/v1')?.name).toBe('cpu');
    expect(registry.engineFor('/sd/text2image/v1')?.name).toBe('sandbox');
    expect(registry.engineFor('/faceswap/v1')).toBeUndefined();
  });

  it('honours a pipeline pinned to an engine', () => {
    const config = engineConfigFromEnv({
      IMAGEGEN_ENGINES: 'cpu,sandbox',
      IMAGEGEN_PIPELINE_ENGINES: '/superresolution/v1=sandbox',
    });
    const registry = createEngineRegistry([sandbox, cpu], config);
    expect(registry.engineFor('/superresolution/v1')?.name).toBe('sandbox');
    expect(registry.describe()).toEqual([
      { name: 'cpu', pipelines: ['/bgremover/v1'] },
      { name: 'sandbox', pipelines: ['/sd/text2image/v1', '/superresolution/v1'] },
    ]);
  });

  it('serves nothing through engines that are available but not enabled', () => {
    const registry = createEngineRegistry([sandbox, cpu], engineConfigFromEnv({ IMAGEGEN_ENGINES: 'cpu' }));
    expect(registry.engineFor('/sd/text2image/v1')).toBeUndefined();
    expect(registry.describe().map((e) => e.name)).toEqual(['cpu']);
  });

  it('defaults to the sandbox engine', () => {
    expect(engineConfigFromEnv({}).enabled).toEqual(['sandbox']);
  });

  it('refuses configuration naming an unknown engine or a malformed pin', () => {
    expect(() =>
      createEngineRegistry([sandbox], engineConfigFromEnv({ IMAGEGEN_ENGINES: 'comfyui' })),
    ).toThrow('engine "comfyui" is configured but not available (available: sandbox)');
    expect(() => engineConfigFromEnv({ IMAGEGEN_PIPELINE_ENGINES: '/bgremover/v1' })).toThrow(
      /not <pipeline>=<engine>/,
    );
    expect(() =>
      createEngineRegistry(
        [sandbox, cpu],
        engineConfigFromEnv({ IMAGEGEN_PIPELINE_ENGINES: '/bgremover/v1=cpu' }),
      ),
    ).toThrow(/pinned to engine "cpu", which is not enabled/);
  });
});
