import { ALL_NODE_PACKS } from '@imagegen/engine-comfyui/engine';
import { objectInfoWithPacks } from '../src/fake-comfyui/captures.ts';
import {
  type FakeComfyOptions,
  type FakeComfyUI,
  PIPELINE_SUITE,
  startFakeComfyUI,
  suiteModelFiles,
} from '../src/index.ts';

/** What the suite's tests run against: the SD 1.5 checkpoint mapped, and a server that lacks a node class. */

export const CHECKPOINTS = { 'sd1.5': 'random-sd15.safetensors' };

export const pick = (name: string) => PIPELINE_SUITE.find((testCase) => testCase.name === name)!;

/**
 * A fake with every pack but for Canny's class, holding every file the suite's graphs load with
 * CHECKPOINTS (`models` may take some away), with these other options.
 */
export async function startSuiteFake(
  models: (files: Record<string, string[]>) => Record<string, readonly string[]> = (files) => files,
  options: Omit<FakeComfyOptions, 'objectInfo' | 'models'> = {},
): Promise<FakeComfyUI> {
  const { Canny: _canny, ...withoutCanny } = objectInfoWithPacks(ALL_NODE_PACKS);
  return startFakeComfyUI({
    ...options,
    objectInfo: withoutCanny,
    models: models(await suiteModelFiles(CHECKPOINTS)),
  });
}
