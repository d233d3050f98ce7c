import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeComfyUI, runServerSuite, startFakeComfyUI, suiteModelFiles } from '../src/index.ts';
import { CHECKPOINTS, pick, startSuiteFake } from './suite-fake.ts';

/**
 * The real-server suite (`npm run test:comfyui`), driven against a fake that lacks a node class
 * and a checkpoint: what the server can run runs and is checked, the rest is skipped with what it
 * lacks, and a wrong answer fails.
 */

let fake: FakeComfyUI;

beforeAll(async () => {
  fake = await startSuiteFake((models) => ({
    ...models,
    checkpoints: models.checkpoints!.filter((file) => !file.startsWith('sd_xl')),
  }));
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
        // IC-Light lists `unet`, a legacy folder name `/models/unet` answers 404 for: the loader's
        // own list in /object_info says the file is there.
        pick('/relight/v1'),
        // LCMScheduler's LoRA is a role this deployment's setting does not map.
        pick('/sd/text2image/v1 with LCMScheduler'),
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
      ['/relight/v1', 'ran', '2 image(s) of 181x136'],
      ['/sd/text2image/v1 with LCMScheduler', 'skipped', 'COMFYUI_CHECKPOINTS maps no sd1.5:lcm'],
      ['a case expecting three images', 'failed', 'expected 3 image(s) of 128x192, got 128x192, 128x192'],
    ]);
    expect(seen).toEqual(outcomes.map((outcome) => outcome.name));
    // What a server must hold never lists a node's own "none" choice as a file.
    expect(Object.values(await suiteModelFiles(CHECKPOINTS)).flat()).not.toContain('none');
    expect(fake.executions).toHaveLength(5);
  });

  it('trains a LoRA, stores it, and draws with it where the server reads the models folder', async () => {
    const training = pick('/train_model/v1');
    // A folder the server does not read: the LoRA is stored and checked, not used.
    const elsewhere = await runServerSuite(fake.url, { checkpoints: CHECKPOINTS, cases: [training] });
    expect(elsewhere.map(({ outcome, detail }) => [outcome, detail])).toEqual([
      [
        'ran',
        expect.stringMatching(
          /^1 sample image\(s\) of 64x64; the LoRA loras\/[0-9a-f]{32}\.safetensors \(\d+ bytes, sha256 [0-9a-f]{12}…\); the server does not read .+, so it was not used$/,
        ),
      ],
    ]);
    // The server's own models folder: a text2image naming the LoRA loads it.
    const modelsDir = await mkdtemp(path.join(tmpdir(), 'imagegen-suite-served-'));
    const served = await startFakeComfyUI({ modelsDir });
    try {
      const runs = await runServerSuite(served.url, {
        checkpoints: CHECKPOINTS,
        cases: [training],
        modelsDir,
      });
      expect(runs.map(({ outcome, detail }) => [outcome, detail])).toEqual([
        ['ran', expect.stringMatching(/; a text2image with it in lora_models drew 1 image\(s\)$/)],
      ]);
      const [lora] = await readdir(path.join(modelsDir, 'loras'));
      const history = JSON.stringify(await (await fetch(`${served.url}/history`)).json());
      expect(history).toContain(`"lora_name":"${lora}"`);
    } finally {
      await served.close();
      await rm(modelsDir, { recursive: true, force: true });
    }
  });

  it("places an owner's adapter in the models folder the server reads, and draws with it", async () => {
    const adapterCase = pick('/sd/text2image/v1 with an uploaded adapter in ip_adapter');
    const [owned] = adapterCase.ownerModels!;
    // Without the server's models folder there is nowhere to put it.
    const nowhere = await runServerSuite(fake.url, { checkpoints: CHECKPOINTS, cases: [adapterCase] });
    expect(nowhere.map(({ outcome, detail }) => [outcome, detail])).toEqual([
      ['skipped', "an owner's adapter needs COMFYUI_MODELS_DIR, the models folder the server reads"],
    ]);
    const modelsDir = await mkdtemp(path.join(tmpdir(), 'imagegen-suite-adapter-'));
    // The server's files (the fake lists the folder at every request), but for the owner's copy.
    for (const [folder, files] of Object.entries(await suiteModelFiles(CHECKPOINTS))) {
      await mkdir(path.join(modelsDir, folder), { recursive: true });
      for (const file of files.filter((name) => !name.startsWith(owned!.modelId)))
        await writeFile(path.join(modelsDir, folder, file), 'random weights');
    }
    const served = await startFakeComfyUI({ modelsDir });
    try {
      const runs = await runServerSuite(served.url, {
        checkpoints: CHECKPOINTS,
        cases: [adapterCase],
        modelsDir,
      });
      expect(runs.map(({ outcome, detail }) => [outcome, detail])).toEqual([
        ['ran', '1 image(s) of 128x192'],
      ]);
      const history = JSON.stringify(await (await fetch(`${served.url}/history`)).json());
      expect(history).toContain(`"ipadapter_file":"${owned!.modelId}.safetensors"`);
      expect(await readdir(path.join(modelsDir, 'ipadapter'))).toContain(`${owned!.modelId}.safetensors`);
    } finally {
      await served.close();
      await rm(modelsDir, { recursive: true, force: true });
    }
  });
});
