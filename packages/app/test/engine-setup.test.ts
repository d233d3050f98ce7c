import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { startFakeComfyUI } from '@imagegen/comfyui-fake';
import { COMFYUI_PIPELINES } from '@imagegen/engine-comfyui/engine';
import { type EngineEnv, type ModelSource, setUpEngines as setUp } from '@imagegen/engines';
import { createModelFetcher } from '@imagegen/server';
import { describe, expect, it } from 'vitest';
import { SHIPPED_ENGINES } from '../src/shipped-engines.ts';

/** The engines as `npm start` builds them from these settings. */
function setUpEngines(env: EngineEnv, log?: (line: string) => void, fetchModel?: ModelSource) {
  return setUp(SHIPPED_ENGINES, env, log, fetchModel);
}

describe('the engines npm start builds: the comfyui engine among them', () => {
  it('runs on the servers of COMFYUI_URLS, first in line for the pipelines it compiles', async () => {
    const fake = await startFakeComfyUI();
    const { registry, warnings } = await setUpEngines({
      COMFYUI_URLS: `gpu-1=${fake.url},http://127.0.0.1:9/`,
      IMAGEGEN_ENGINES: 'comfyui,sandbox',
    });
    try {
      expect(warnings).toEqual([]);
      expect(registry.engineFor('/sd/text2image/v1')?.name).toBe('comfyui');
      expect(registry.engineFor('/bgremover/v1')?.name).toBe('sandbox');
      // Training stores its LoRA in COMFYUI_MODELS_DIR: without one, it is not the engine's.
      expect(registry.describe()[0]!.pipelines).toEqual(
        COMFYUI_PIPELINES.filter((pipeline) => pipeline !== '/train_model/v1'),
      );
      expect(registry.engineFor('/train_model/v1')?.name).toBe('sandbox');
      expect(registry.capacity()).toBe(6);
      expect(registry.serverNames()).toEqual(['gpu-1', '127.0.0.1:9']);
      expect(registry.describe()[0]!.servers!.map((server) => server.state)).toEqual(['unknown', 'unknown']);
      await registry.start();
      expect(registry.describe()[0]!.servers).toEqual([
        {
          name: 'gpu-1',
          url: fake.url,
          state: 'up',
          queue: 0,
          inFlight: 0,
          checkpoint: null,
          outOfMemory: 0,
          // What it said it can run: every pipeline, with every node pack installed.
          runs: COMFYUI_PIPELINES.filter((pipeline) => pipeline !== '/train_model/v1'),
          nodeClasses: expect.any(Number),
        },
        {
          name: '127.0.0.1:9',
          url: 'http://127.0.0.1:9',
          state: 'down',
          queue: 0,
          inFlight: 0,
          checkpoint: null,
          outOfMemory: 0,
          error: expect.stringContaining('127.0.0.1:9'),
        },
      ]);
    } finally {
      await registry.close();
      await fake.close();
    }
  });

  it('warns when comfyui is enabled without servers, and stops on a malformed setting', async () => {
    const { registry, warnings } = await setUpEngines({ IMAGEGEN_ENGINES: 'comfyui,sandbox' });
    expect(warnings).toEqual([
      'IMAGEGEN_ENGINES names comfyui, but COMFYUI_URLS names no server; its pipelines have no engine',
    ]);
    expect(registry.engineFor('/sd/text2image/v1')?.name).toBe('sandbox');
    await expect(
      setUpEngines({ COMFYUI_URLS: 'gpu-1=10.0.0.5', IMAGEGEN_ENGINES: 'comfyui' }),
    ).rejects.toThrow('COMFYUI_URLS: "gpu-1=10.0.0.5" is not URL or NAME=URL');
    await expect(
      setUpEngines({
        COMFYUI_URLS: 'http://a:8188',
        COMFYUI_CHECKPOINTS: 'sdxl',
        IMAGEGEN_ENGINES: 'comfyui',
      }),
    ).rejects.toThrow('COMFYUI_CHECKPOINTS: "sdxl" is not <model id>=<checkpoint file>');
  });

  it('stores model files with COMFYUI_MODELS_DIR: load_model, sync_model and training are then its own', async () => {
    const fetchModel = async () => ({ length: 0, body: Readable.from([]) });
    const withFolder = await setUpEngines(
      {
        COMFYUI_URLS: 'gpu-1=http://127.0.0.1:9',
        COMFYUI_MODELS_DIR: '/srv/models',
        IMAGEGEN_ENGINES: 'comfyui',
      },
      undefined,
      fetchModel,
    );
    expect(withFolder.registry.engineFor('/load_model/v1')?.name).toBe('comfyui');
    expect(withFolder.registry.engineFor('/sync_model/v1')?.name).toBe('comfyui');
    expect(withFolder.registry.engineFor('/train_model/v1')?.name).toBe('comfyui');
    const without = await setUpEngines({
      COMFYUI_URLS: 'gpu-1=http://127.0.0.1:9',
      IMAGEGEN_ENGINES: 'comfyui',
    });
    // Without a folder the engine stores nothing: the worker registers the model row alone, and
    // no engine of this list trains.
    expect(without.registry.engineFor('/load_model/v1')).toBeUndefined();
    expect(without.registry.engineFor('/train_model/v1')).toBeUndefined();
    await expect(
      setUpEngines(
        { COMFYUI_URLS: 'http://a:8188', COMFYUI_MODELS_DIR: 'gpu-1=/m', IMAGEGEN_ENGINES: 'comfyui' },
        undefined,
        fetchModel,
      ),
    ).rejects.toThrow('COMFYUI_MODELS_DIR: "gpu-1" is not the name of a server in COMFYUI_URLS');
    await Promise.all([withFolder.registry.close(), without.registry.close()]);
  });

  it('fetches the model manifest through the same SSRF guard and MODEL_MAX_BYTES cap as /load_model/v1, saying so while it does', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'imagegen-manifest-'));
    const files = createServer((_request, response) =>
      response.writeHead(200, { 'content-length': 64 }).end(Buffer.alloc(64)),
    );
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/model.safetensors`;
    await writeFile(
      path.join(dir, 'manifest.json'),
      JSON.stringify({ models: [{ url, folder: 'loras', name: 'm.safetensors' }] }),
    );
    const fake = await startFakeComfyUI();
    const lines: string[] = [];
    const env = {
      COMFYUI_URLS: `gpu-1=${fake.url}`,
      COMFYUI_MODELS_DIR: path.join(dir, 'models'),
      COMFYUI_MODEL_MANIFEST: path.join(dir, 'manifest.json'),
      IMAGEGEN_ENGINES: 'comfyui',
    };
    try {
      // npm start's own fetcher (IMAGEGEN_ALLOW_PRIVATE_URLS unset): a loopback URL is refused.
      const guarded = await setUpEngines(env, (line) => lines.push(line), createModelFetcher());
      await guarded.registry.start();
      await guarded.registry.close();
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^model manifest: loras\/m\.safetensors not fetched after 1 try: model_url: .*not public/,
        ),
      );
      // Allowed, but over MODEL_MAX_BYTES.
      const capped = await setUpEngines(
        { ...env, MODEL_MAX_BYTES: '32' },
        (line) => lines.push(line),
        createModelFetcher({ allowPrivate: true }),
      );
      await capped.registry.start();
      await capped.registry.close();
      expect(lines).toContain(
        'model manifest: loras/m.safetensors not fetched after 1 try: model_url: the file is larger than the MODEL_MAX_BYTES limit of 32 bytes',
      );
      expect(await readdir(path.join(dir, 'models', 'loras')).catch(() => [])).toEqual([]);
      // Within the cap it is fetched.
      const fetched = await setUpEngines(
        env,
        (line) => lines.push(line),
        createModelFetcher({ allowPrivate: true }),
      );
      expect(fetched.registry.startup()).toBeNull();
      const starting = fetched.registry.start();
      expect(fetched.registry.startup()).toMatch(/^comfyui: /);
      await starting;
      await fetched.registry.close();
      expect(await readdir(path.join(dir, 'models', 'loras'))).toEqual(['m.safetensors']);
      await expect(
        setUpEngines({ ...env, COMFYUI_MODELS_DIR: '' }, undefined, createModelFetcher()),
      ).rejects.toThrow(
        'COMFYUI_MODEL_MANIFEST is set, but COMFYUI_MODELS_DIR names no folder to fetch it into',
      );
    } finally {
      await fake.close();
      await new Promise((resolve) => files.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });
});
