import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_NODE_PACKS } from '../../src/comfyui/node-packs.ts';
import { objectInfoWithPacks } from '../../src/testing/fake-comfyui/captures.ts';
import {
  type FakeComfyUI,
  PIPELINE_SUITE,
  runServerSuite,
  startFakeComfyUI,
  suiteModelFiles,
} from '../../src/testing/index.ts';

/**
 * The real-server suite (`npm run test:comfyui`), driven against a fake that lacks a node class
 * and a checkpoint: what the server can run runs and is checked, the rest is skipped with what it
 * lacks, and a wrong answer fails.
 */

const CHECKPOINTS = { 'sd1.5': 'random-sd15.safetensors' };
const pick = (name: string) => PIPELINE_SUITE.find((testCase) => testCase.name === name)!;
let fake: FakeComfyUI;

beforeAll(async () => {
  const models = await suiteModelFiles(CHECKPOINTS);
  const { Canny: _canny, ...withoutCanny } = objectInfoWithPacks(ALL_NODE_PACKS);
  fake = await startFakeComfyUI({
    objectInfo: withoutCanny,
    models: { ...models, checkpoints: models.checkpoints!.filter((file) => !file.startsWith('sd_xl')) },
  });
});
afterAll(() => fake?.close());

describe('the pipeline suite against a server', () => {
  it('runs what the server can run, skips what it lacks saying what, and fails a wrong answer', async () => {
    const t2i = pick('/sd/text2image/v1');
    const seen: string[] = [];
    const outcomes = await runServerSuite(fake.url, {
      checkpoints: CHECKPOINTS,
      cases: [
        t2i,
        pick('/sd/controlnet/v1'),
        pick('/sdxl/text2image/v1'),
        pick('/upscaler/v1 deblur'),
        // ReActor's "none" face restorer is a choice of the node, not a file the server must hold.
        pick('/faceswap/v1'),
        { ...t2i, name: 'a case expecting three images', expect: { ...t2i.expect, count: 3 } },
      ],
      onOutcome: (outcome) => seen.push(outcome.name),
    });
    expect(outcomes.map(({ name, outcome, detail }) => [name, outcome, detail])).toEqual([
      ['/sd/text2image/v1', 'ran', '2 image(s) of 128x192'],
      ['/sd/controlnet/v1', 'skipped', 'the server lacks node class Canny'],
      ['/sdxl/text2image/v1', 'skipped', 'the server lacks checkpoints/sd_xl_base_1.0.safetensors'],
      ['/upscaler/v1 deblur', 'ran', '1 image(s) of 192x128'],
      ['/faceswap/v1', 'ran', expect.stringMatching(/^1 image\(s\) of \d+x\d+$/)],
      ['a case expecting three images', 'failed', 'expected 3 image(s) of 128x192, got 128x192, 128x192'],
    ]);
    expect(seen).toEqual(outcomes.map((outcome) => outcome.name));
    // What a server must hold never lists a node's own "none" choice as a file.
    expect(Object.values(await suiteModelFiles(CHECKPOINTS)).flat()).not.toContain('none');
    expect(fake.executions).toHaveLength(4);
  });
});
