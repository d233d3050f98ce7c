import { readFile } from 'node:fs/promises';
import { EngineInputError } from '@imagegen/engines';
import { describe, expect, it } from 'vitest';
import { CONTROLNET_FILES } from '../src/chains/controlnet-stack.ts';
import { FACE_RESTORER } from '../src/chains/face-swap.ts';
import { tilesOf } from '../src/chains/tiles.ts';
import { COMPILERS, compilerFor } from '../src/compilers/index.ts';
import { INSTAMODEL_CHECKPOINT } from '../src/compilers/instamodel.ts';
import type { CompiledWorkflow } from '../src/contracts.ts';
import { compileRequest, nodesOf } from './compile-request.ts';

/**
 * The graphs follow their model family's reference workflow where a valid graph could still make a
 * bad picture: where embeddings act, which CLIP layer reads the prompt, the framing and strength of
 * a picture to start from, and which family's adapters run on which model.
 */

type Link = [string, number];

/** The node a link comes from. */
const source = (workflow: CompiledWorkflow, link: unknown) => workflow.prompt[(link as Link)[0]]!;

/** The texts the first sampler reads as its positive and negative prompt. */
function promptsOf(workflow: CompiledWorkflow): { positive: unknown; negative: unknown } {
  const [sampler] = nodesOf(workflow, 'KSampler');
  return {
    positive: source(workflow, sampler!.inputs['positive']).inputs['text'],
    negative: source(workflow, sampler!.inputs['negative']).inputs['text'],
  };
}

describe('embeddings', () => {
  it('act in the negative prompt where the request wrote them there', () => {
    const workflow = compileRequest('/sd/text2image/v1', {
      prompt: 'a lighthouse at dusk',
      negative_prompt: 'easynegative, blurry',
      embeddings: ['easynegative'],
    });
    expect(promptsOf(workflow)).toEqual({
      positive: 'a lighthouse at dusk',
      negative: 'embedding:easynegative, blurry',
    });
  });

  it('act in the positive prompt where written, with weights, any case, with or without the extension', () => {
    const workflow = compileRequest('/sdxl/text2image/v1', {
      prompt: 'a cat,(Style-A:1.2) in a hat',
      negative_prompt: 'bad-hands-5',
      embeddings: ['style-a', 'bad-hands-5.pt'],
    });
    expect(promptsOf(workflow)).toEqual({
      // ComfyUI reads the brackets' weights first, so the word starts its own segment.
      positive: 'a cat,(embedding:style-a:1.2) in a hat',
      negative: 'embedding:bad-hands-5.pt',
    });
  });

  it('cost a long prompt with many embeddings its length plus their count, not their product', () => {
    const names = Array.from({ length: 20_000 }, (_, i) => `ti-${i}`);
    const prompt = `${'a lighthouse at dawn '.repeat(25_000)}ti-19999`;
    const start = process.cpuUsage();
    const workflow = compileRequest('/sd/text2image/v1', {
      prompt,
      negative_prompt: 'ti-0',
      embeddings: names,
    });
    const used = process.cpuUsage(start);
    const { positive, negative } = promptsOf(workflow) as { positive: string; negative: string };
    expect(negative).toBe('embedding:ti-0');
    expect(
      positive.startsWith(`${prompt.slice(0, -8)}embedding:ti-19999 embedding:ti-1 embedding:ti-2 `),
    ).toBe(true);
    // A pass per name over both prompts took minutes here; one pass takes milliseconds.
    expect((used.user + used.system) / 1000).toBeLessThan(2_000);
  });

  it('keep the ComfyUI syntax a request already wrote, in its place', () => {
    const workflow = compileRequest('/sd/text2image/v1', {
      prompt: 'a lighthouse',
      negative_prompt: 'blurry, (embedding:EasyNegative:1.1)',
      embeddings: ['easynegative'],
    });
    expect(promptsOf(workflow)).toEqual({
      positive: 'a lighthouse',
      negative: 'blurry, (embedding:easynegative:1.1)',
    });
  });

  it('are added to the positive prompt when written in neither, and never match inside a word', () => {
    const workflow = compileRequest('/sd/text2image/v1', {
      prompt: 'a noir street',
      negative_prompt: 'blurry',
      embeddings: ['noi'],
    });
    expect(promptsOf(workflow)).toEqual({ positive: 'a noir street embedding:noi', negative: 'blurry' });
  });
});

describe('clip_skip', () => {
  const layer = (pipeline: string, clip_skip: number) =>
    nodesOf(compileRequest(pipeline, { clip_skip }), 'CLIPSetLastLayer').map(
      (node) => node.inputs['stop_at_clip_layer'],
    );

  it('reads layer -n on SD1.5, as A1111 and ComfyUI count', () => {
    // 1 is SD1.5's own last layer: nothing to change.
    expect(layer('/sd/text2image/v1', 1)).toEqual([]);
    expect(layer('/sd/text2image/v1', 2)).toEqual([-2]);
    expect(layer('/sd/image2image/v1', 4)).toEqual([-4]);
  });

  it("keeps SDXL's own penultimate layer for 1 and 2, and reads deeper from 3", () => {
    expect(layer('/sdxl/text2image/v1', 1)).toEqual([]);
    expect(layer('/sdxl/text2image/v1', 2)).toEqual([]);
    expect(layer('/sdxl/inpainting/v1', 3)).toEqual([-3]);
  });
});

describe('a picture to start from', () => {
  const landscape = { imageSizes: { init_image: { width: 1200, height: 800 } } };

  /** The size the init image is scaled to before it is encoded. */
  function initScale(workflow: CompiledWorkflow) {
    const [loaded] = nodesOf(workflow, 'LoadImage').filter((node) => node.inputs['image'] === 'init.png');
    return nodesOf(workflow, 'ImageScale').find((node) => (node.inputs['image'] as Link)[0] === loaded!.id)!
      .inputs;
  }

  it('keeps its framing: its proportions over the requested area, sampled on the latent grid', () => {
    const workflow = compileRequest('/sd/image2image/v1', { width: 512, height: 512 }, landscape);
    const scaled = initScale(workflow);
    expect(scaled).toMatchObject({ width: 624, height: 416, crop: 'disabled' });
    // The answer is that framing, 627 x 418 exactly: never the requested square.
    const [save] = nodesOf(workflow, 'SaveImage');
    const answer = source(workflow, save!.inputs['images']);
    expect(answer.inputs).toMatchObject({ width: 627, height: 418, crop: 'disabled' });
    expect(source(workflow, answer.inputs['image']).class_type).toBe('VAEDecode');
  });

  it('inpaints at the framed working size and lays the painting over the original at its own size', () => {
    const portrait = { init_image: { width: 800, height: 1200 }, mask_image: { width: 800, height: 1200 } };
    const workflow = compileRequest(
      '/sdxl/inpainting/v1',
      { width: 1024, height: 1024 },
      { imageSizes: portrait },
    );
    const sizes = nodesOf(workflow, 'ImageScale').map((node) => [
      node.inputs['width'],
      node.inputs['height'],
    ]);
    // The picture to the working size, then the painting back to the picture's own.
    expect(sizes).toEqual([
      [840, 1256],
      [800, 1200],
    ]);
    const [save] = nodesOf(workflow, 'SaveImage');
    const composite = source(workflow, save!.inputs['images']);
    expect(composite.class_type).toBe('ImageCompositeMasked');
    const [loaded] = nodesOf(workflow, 'LoadImage').filter((node) => node.inputs['image'] === 'init.png');
    expect(composite.inputs['destination']).toEqual([loaded!.id, 0]);
    // The mask is grown past its edge and feathered, for the sampler and the composite alike.
    const blur = source(workflow, composite.inputs['mask']);
    expect(source(workflow, blur.inputs['image']).class_type).toBe('ImageBlur');
    const [conditioning] = nodesOf(workflow, 'InpaintModelConditioning');
    expect(conditioning!.inputs['mask']).toEqual(composite.inputs['mask']);
    expect(nodesOf(workflow, 'GrowMask')[0]?.inputs).toMatchObject({ expand: 9 });
  });

  it('is never changed more than strength allows, hires pass included', () => {
    const denoises = (strength: number) =>
      nodesOf(compileRequest('/sd/image2image/v1', { strength, hires: true }, landscape), 'KSampler').map(
        (node) => node.inputs['denoise'],
      );
    expect(denoises(0.3)).toEqual([0.3, 0.3]);
    expect(denoises(0.8)).toEqual([0.8, 0.5]);
    const text = nodesOf(compileRequest('/sd/text2image/v1', { hires: true }), 'KSampler');
    expect(text.map((node) => node.inputs['denoise'])).toEqual([1, 0.5]);
  });
});

describe('model families', () => {
  it("runs an SDXL model on an SD path with SDXL's controlnets and CLIP layer", () => {
    const workflow = compileRequest('/sd/text2image/v1', {
      model_id: 'sdxl',
      clip_skip: 2,
      controlnets: ['canny'],
      control_image: 'https://images.example/control-0.png',
    });
    expect(nodesOf(workflow, 'CheckpointLoaderSimple')[0]?.inputs['ckpt_name']).toBe(
      'sd_xl_base_1.0.safetensors',
    );
    expect(nodesOf(workflow, 'ControlNetLoader')[0]?.inputs['control_net_name']).toBe(
      CONTROLNET_FILES.sdxl['canny'],
    );
    expect(nodesOf(workflow, 'CLIPSetLastLayer')).toEqual([]);
  });

  it("refuses an SD1.5 IP-Adapter on an SDXL model, naming the family's adapters", () => {
    expect(() =>
      compileRequest('/sd/text2image/v1', {
        model_id: 'sdxl',
        ip_adapter: ['ip-adapter_sd15'],
        ip_adapter_image: 'https://images.example/init.png',
      }),
    ).toThrow(/^ip_adapter: .*ip-adapter_sdxl/);
  });

  it('refuses a face lock model of the family its face adapters do not fit', () => {
    expect(() => compileRequest('/facelock/v1', { model_id: 'sdxl' })).toThrow(EngineInputError);
    expect(() => compileRequest('/facelock/v1', { model_id: 'sdxl' })).toThrow(
      /^model_id: 'sdxl' is an SDXL model, .* SD1.5 models only; .*\/facelock\/v2/,
    );
    expect(() => compileRequest('/facelock/v2', { model_id: 'sd1.5' })).toThrow(
      /^model_id: 'sd1.5' is an SD1.5 model, .* SDXL models only; .*\/facelock\/v1/,
    );
  });
});

describe('face swap', () => {
  it('restores the swapped face with the restorer the servers are told to hold', () => {
    for (const [pipeline, extra] of [
      ['/faceswap/v1', {}],
      ['/modelswitch/v1', { input_face: 'https://images.example/control-0.png' }],
    ] as const) {
      const [swap] = nodesOf(compileRequest(pipeline, extra), 'ReActorFaceSwap');
      expect(swap?.inputs, pipeline).toMatchObject({
        face_restore_model: FACE_RESTORER,
        face_restore_visibility: 1,
      });
      const needs = compilerFor(pipeline)!.requires.models ?? [];
      const restorers = needs.find((need) => need.folder === 'facerestore_models');
      expect(restorers?.what, pipeline).toContain(FACE_RESTORER);
      expect(restorers?.what).toMatch(/missing from `\/object_info` while this folder is empty/);
      // ReActor's safety check runs before every swap, from a model it otherwise downloads.
      const checker = needs.find((need) => need.folder === 'nsfw_detector');
      expect(checker?.what, pipeline).toContain('vit-base-nsfw-detector/');
    }
  });
});

describe('outpainting', () => {
  it("samples the grown canvas at resolution squared, in its own proportions, near SDXL's area", () => {
    const megapixels = (extra: Record<string, unknown>) =>
      nodesOf(compileRequest('/outpainting/v1', extra), 'ImageScaleToTotalPixels').map(
        (node) => node.inputs['megapixels'],
      );
    expect(megapixels({})).toEqual([1]);
    expect(megapixels({ resolution: 896 })).toEqual([0.7656]);
    // Below SDXL's range, its smallest area (768 squared), not a quarter of its megapixel.
    expect(megapixels({ resolution: 512 })).toEqual([0.5625]);
    expect(megapixels({ resolution: 64 })).toEqual([0.5625]);
  });

  it('answers exactly the grown canvas, the old picture laid back through the mask, one per sample', () => {
    const workflow = compileRequest('/outpainting/v1', { samples: 2 });
    const [pad] = nodesOf(workflow, 'ImagePadForOutpaint');
    const [save] = nodesOf(workflow, 'SaveImage');
    const composite = source(workflow, save!.inputs['images']);
    expect(composite.class_type).toBe('ImageCompositeMasked');
    expect(composite.inputs).toMatchObject({ resize_source: true, mask: [pad!.id, 1] });
    const canvases = source(workflow, composite.inputs['destination']);
    expect(canvases).toMatchObject({
      class_type: 'RepeatImageBatch',
      inputs: { image: [pad!.id, 0], amount: 2 },
    });
    expect(source(workflow, composite.inputs['source']).class_type).toBe('VAEDecode');
  });
});

describe('the needs table', () => {
  it('says which request fields need each pack a plain request does not use', () => {
    const packs = (pipeline: string) =>
      Object.fromEntries((compilerFor(pipeline)!.requires.packs ?? []).map((pack) => [pack.name, pack.when]));
    for (const pipeline of ['/sd/text2image/v1', '/sdxl/image2image/v1', '/sdxl/controlnet/v1']) {
      expect(packs(pipeline), pipeline).toEqual({
        comfyui_controlnet_aux: 'only with `controlnets` naming `openpose` or `depth`',
        ComfyUI_IPAdapter_plus: 'only with `ip_adapter`',
        comfyui_jankhidiffusion: 'only with `hidiffusion: true`',
        style_aligned_comfy: 'only with `attn` or `adain` true, or a `style`',
      });
    }
    expect(packs('/faceswap/v1')).toEqual({ 'ComfyUI-ReActor': undefined });
    expect(packs('/modelswitch/v1')['ComfyUI-ReActor']).toBe('only with `input_face`');
    expect(packs('/bgchanger/v1')['ComfyUI_IPAdapter_plus']).toBe('only with `style_image`');
    expect(packs('/inpaint_anything/v1')['ComfyUI-RMBG']).toBe('only with `operation: "remove"`');
  });

  it('holds no pack class in the graph of a plain request that names its pack optional', () => {
    const workflow = compileRequest('/sd/text2image/v1');
    const classes = new Set(Object.values(workflow.prompt).map((node) => node.class_type));
    for (const optional of [
      'OpenposePreprocessor',
      'IPAdapterAdvanced',
      'ApplyRAUNet',
      'ApplyMSWMSAAttention',
      'StyleAlignedBatchAlign',
    ])
      expect(classes.has(optional)).toBe(false);
  });
});

describe('SD3', () => {
  it("samples with the sampler of ComfyUI's SD3 examples: euler on sgm_uniform", () => {
    for (const pipeline of ['/sd3/v1', '/sd3_5/v1']) {
      const [sampler] = nodesOf(compileRequest(pipeline), 'KSampler');
      expect(sampler?.inputs, pipeline).toMatchObject({ sampler_name: 'euler', scheduler: 'sgm_uniform' });
    }
  });
});

describe('instamodel', () => {
  it('draws with the step-distilled SDXL its 9-step, guidance-1 defaults are made for, as its card samples', () => {
    const workflow = compileRequest('/instamodel/v1');
    expect(nodesOf(workflow, 'CheckpointLoaderSimple')[0]?.inputs['ckpt_name']).toBe(
      INSTAMODEL_CHECKPOINT.file,
    );
    // The API's default 9 steps stand for the 8 the checkpoint is distilled for.
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs).toMatchObject({
      steps: 8,
      cfg: 1,
      sampler_name: 'euler',
      scheduler: 'sgm_uniform',
    });
    const mapped = compileRequest(
      '/instamodel/v1',
      {},
      { checkpoints: { 'sdxl-lightning': 'juggernaut-lightning.safetensors' } },
    );
    expect(nodesOf(mapped, 'CheckpointLoaderSimple')[0]?.inputs['ckpt_name']).toBe(
      'juggernaut-lightning.safetensors',
    );
  });
});

describe('upscaler variation', () => {
  const big = { imageSizes: { input_image: { width: 1200, height: 800 } } };

  it('resamples the enlarged picture in overlapping tiles of at most 1024 px, none larger', () => {
    const workflow = compileRequest('/upscaler/v1', { type: 'variation' }, big);
    const crops = nodesOf(workflow, 'ImageCrop').map((node) => node.inputs);
    expect(crops.map(({ x, y }) => [x, y])).toEqual([
      [0, 0],
      [688, 0],
      [1376, 0],
      [0, 576],
      [688, 576],
      [1376, 576],
    ]);
    for (const crop of crops) expect(crop).toMatchObject({ width: 1024, height: 1024 });
    expect(nodesOf(workflow, 'KSampler')).toHaveLength(6);
    for (const sampler of nodesOf(workflow, 'KSampler')) {
      const encoded = source(workflow, sampler.inputs['latent_image']);
      expect(source(workflow, encoded.inputs['pixels']).class_type).toBe('ImageCrop');
    }
    // Each tile after the first blends into the ones before it across the overlap.
    const feathers = nodesOf(workflow, 'FeatherMask').map(({ inputs }) => [inputs['left'], inputs['top']]);
    expect(feathers).toEqual([
      [64, 0],
      [64, 0],
      [0, 64],
      [64, 64],
      [64, 64],
    ]);
    const [save] = nodesOf(workflow, 'SaveImage');
    expect(source(workflow, save!.inputs['images']).class_type).toBe('ImageCompositeMasked');
  });

  it('covers every pixel with tiles that overlap by at least the overlap', () => {
    for (const size of [
      { width: 192, height: 128 },
      { width: 1025, height: 3000 },
      { width: 4096, height: 1024 },
    ]) {
      const tiles = tilesOf(size, 1024, 64);
      for (const tile of tiles) {
        expect(tile.width).toBeLessThanOrEqual(1024);
        expect(tile.x + tile.width).toBeLessThanOrEqual(size.width);
        expect(tile.y + tile.height).toBeLessThanOrEqual(size.height);
      }
      const xs = [...new Set(tiles.map((t) => t.x))];
      expect(xs.at(-1)! + tiles[0]!.width).toBe(size.width);
      for (let i = 1; i < xs.length; i++)
        expect(xs[i - 1]! + tiles[0]!.width - xs[i]!).toBeGreaterThanOrEqual(64);
    }
  });

  it('samples a small enlargement in one pass, laid over the enlargement at exactly its size', () => {
    const workflow = compileRequest(
      '/upscaler/v1',
      { type: 'variation' },
      { imageSizes: { input_image: { width: 96, height: 64 } } },
    );
    expect(nodesOf(workflow, 'ImageCrop')).toEqual([]);
    expect(nodesOf(workflow, 'KSampler')).toHaveLength(1);
    expect(nodesOf(workflow, 'ImageCompositeMasked')).toHaveLength(1);
  });
});

describe('relight', () => {
  it("follows IC-Light's demo: subject on grey, a small first pass from the light, a 0.5 pass at full size", () => {
    const workflow = compileRequest('/relight/v1', { width: 1024, height: 1024, light: 'right' });
    const [cut] = nodesOf(workflow, 'RMBG');
    expect(cut).toBeDefined();
    const [grey] = nodesOf(workflow, 'EmptyImage');
    expect(grey?.inputs).toMatchObject({ width: 1024, height: 1024, color: 0x7f7f7f });
    // The answer over the demo's 1.5 is past SD1.5's range: its own 512 px.
    expect(nodesOf(workflow, 'LightSource')[0]?.inputs).toMatchObject({
      light_position: 'Right Light',
      width: 512,
      height: 512,
    });
    const samplers = nodesOf(workflow, 'KSampler').map((node) => node.inputs);
    // The demo's 25 steps, 0.9 then 0.5, at its cfg 2 for the API's default guidance.
    expect(samplers.map((inputs) => [inputs['steps'], inputs['denoise'], inputs['cfg']])).toEqual([
      [25, 0.9, 2],
      [25, 0.5, 2],
    ]);
    const sent = nodesOf(compileRequest('/relight/v1', { guidance_scale: 3 }), 'KSampler');
    expect(sent.map((node) => node.inputs['cfg'])).toEqual([3, 3]);
    // Each pass is conditioned on the cut-out subject at its own size.
    const foregroundSizes = nodesOf(workflow, 'ICLightConditioning').map((node) => {
      const encoded = source(workflow, node.inputs['foreground']);
      const pixels = source(workflow, encoded.inputs['pixels']);
      return pixels.class_type === 'ImageScale' ? [pixels.inputs['width'], pixels.inputs['height']] : 'full';
    });
    expect(foregroundSizes).toEqual([[512, 512], 'full']);
    const second = source(workflow, samplers[1]!['latent_image']);
    expect(source(workflow, second.inputs['pixels']).inputs).toMatchObject({ width: 1024, height: 1024 });
  });

  it('answers the photo in its own framing, never cropped to the requested square', () => {
    const workflow = compileRequest(
      '/relight/v1',
      { width: 1024, height: 1024 },
      { imageSizes: { init_image: { width: 1200, height: 800 } } },
    );
    for (const scale of nodesOf(workflow, 'ImageScale')) expect(scale.inputs['crop']).toBe('disabled');
    const [save] = nodesOf(workflow, 'SaveImage');
    expect(source(workflow, save!.inputs['images']).inputs).toMatchObject({ width: 1254, height: 836 });
    expect(nodesOf(workflow, 'EmptyImage')[0]?.inputs).toMatchObject({ width: 1256, height: 840 });
  });
});

describe('the reference table', () => {
  it('names every pipeline the engine compiles, each with a reference and its differences', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(
      readme.indexOf('## Reference workflows'),
      readme.indexOf('## The engine and'),
    );
    const rows = section.split('\n').filter((line) => line.startsWith('| `'));
    const named = new Set(
      rows.flatMap((row) => [...row.split(' | ')[0]!.matchAll(/`(\/[^`\s]+)`/g)].map((m) => m[1])),
    );
    for (const compiler of COMPILERS) expect(named, compiler.pipeline).toContain(compiler.pipeline);
    for (const row of rows) {
      const [, reference, differences] = row.split(' | ');
      expect(reference?.length, row).toBeGreaterThan(10);
      expect(differences?.length, row).toBeGreaterThan(30);
    }
  });
});
