import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EngineJob, JobModel, RunContext } from '@imagegen/engines';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ModelFileOptions, runModelTask } from '../src/model-tasks.ts';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'imagegen-model-tasks-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const LORA: JobModel = {
  modelId: 'a'.repeat(32),
  modelType: 'lora',
  baseModel: 'sd1.5',
  extension: 'safetensors',
  url: null,
};
const ctx: RunContext = { signal: new AbortController().signal, progress: () => {} };
const job = (pipeline: string, servers?: string[]): EngineJob => ({
  pipeline,
  input: {},
  images: {},
  seed: 1,
  models: { [LORA.modelId]: LORA },
  ...(servers ? { servers } : {}),
});
const options = (folders: ModelFileOptions['folders']): ModelFileOptions => ({
  folders,
  maxBytes: 1024,
  fetch: async () => {
    throw new Error('no download in these cases');
  },
});

describe('model tasks on the comfyui engine', () => {
  it("syncs into a named server's own folder, and refuses a server with no folder, naming server_id", async () => {
    const shared = path.join(root, 'shared');
    const own = path.join(root, 'gpu-2');
    await mkdir(path.join(shared, 'loras'), { recursive: true });
    await writeFile(path.join(shared, 'loras', `${LORA.modelId}.safetensors`), 'weights');
    await runModelTask(
      job('/sync_model/v1', ['gpu-2']),
      ctx,
      options({ shared, byServer: { 'gpu-2': own } }),
    );
    expect(await readFile(path.join(own, 'loras', `${LORA.modelId}.safetensors`), 'utf8')).toBe('weights');

    const ownOnly = options({ shared: null, byServer: { 'gpu-2': own } });
    await expect(runModelTask(job('/sync_model/v1', ['gpu-1']), ctx, ownOnly)).rejects.toThrow(
      "server_id: server 'gpu-1' has no model folder (COMFYUI_MODELS_DIR names none for it, and no shared one)",
    );
  });

  it('refuses to sync a model with no file, and a load without model_url, naming the field', async () => {
    const folders = options({ shared: path.join(root, 'shared'), byServer: {} });
    await expect(runModelTask(job('/sync_model/v1'), ctx, folders)).rejects.toThrow(
      `model_id: model '${LORA.modelId}' has no file in COMFYUI_MODELS_DIR here; load it with model_url first`,
    );
    await expect(runModelTask(job('/load_model/v1'), ctx, folders)).rejects.toThrow(
      'model_url: the comfyui engine stores model files downloaded from model_url; pretrained_model_path is not fetched',
    );
  });
});
