import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listModelsDir } from '../src/fake-comfyui/models-dir.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'imagegen-fake-models-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("the fake's model folder listing", () => {
  it("lists what ComfyUI lists: files of its model extensions, never a download's .part", async () => {
    await mkdir(path.join(dir, 'loras'));
    await writeFile(path.join(dir, 'loras', 'x.safetensors'), 'x');
    // How the comfyui engine names a download until it is whole.
    await writeFile(path.join(dir, 'loras', '.y.safetensors.1.part'), 'y');
    expect(listModelsDir(dir)).toEqual({ loras: ['x.safetensors'] });
    expect(listModelsDir(path.join(dir, 'absent'))).toEqual({});
  });
});
