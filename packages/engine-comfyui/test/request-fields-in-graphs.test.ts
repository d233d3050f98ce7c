import { EngineInputError, type JobModel } from '@imagegen/engines';
import { describe, expect, it } from 'vitest';
import { PROMPT_STYLES } from '../src/chains/prompt-styles.ts';
import { HIRES_DENOISE } from '../src/chains/sampling-passes.ts';
import { SCHEDULER_SAMPLING } from '../src/chains/schedulers.ts';
import { COMPILERS, compilerFor } from '../src/compilers/index.ts';
import type { CompiledWorkflow } from '../src/contracts.ts';
import { NODE_TYPES } from '../src/workflow/node-types.ts';
import {
  compileRequest,
  LCM_LORAS,
  MINIMAL_REQUESTS,
  nodesOf,
  requestProperties,
  uploadsOf,
  url,
  validatedRequest,
} from './compile-request.ts';

/**
 * Every field the contract accepts for a pipeline this engine serves does something: it reaches
 * the graph, or it is one the original service's own pipeline took no notice of in that case and
 * the task notes it (listed in `requires.ignores`, which the docs' engine notes print), or the value
 * is one the engine cannot draw and the task fails naming the field. A field that does none of
 * these, accepted and silently dropped, fails this test. The fields that do reach the graph
 * land where they should.
 */

/** Fields that never change the picture: delivery, routing, the worker's own steps. */
const NOT_PICTURE = new Set([
  'webhook',
  'webhook_events_filter',
  'server_id',
  'direct_link',
  'batch_id',
  'file_prefix',
  'queued_image_urls',
  'base64',
  // The worker checks outputs after the engine ran, and draws -1 into the task's seed (ctx.seed).
  'safety_checker',
  'seed',
  // The worker rewrites the prompt before any engine gets it (server/src/tasks/prompt-enhancer.ts).
  'enhance_prompt',
]);
/** Per pipeline: fields its compiler documents as not changing the picture. */
const NOT_PICTURE_HERE: Readonly<Record<string, readonly string[]>> = {
  // ComfyUI tiles the upscale by itself; the tile size changes memory use, not the picture.
  '/superresolution/v1': ['tile'],
  // What the trained model's record says about it (its name, description, visibility, tags, the
  // words that call it up, whether it is NSFW): the worker writes them on the row, not the graph.
  '/train_model/v1': ['model_name', 'description', 'visibility', 'trigger_words', 'tags', 'nsfw'],
};
/** Bases that reach every field: the upscaler's prompt matters only to `variation`. */
const BASE: Readonly<Record<string, Record<string, unknown>>> = { '/upscaler/v1': { type: 'variation' } };

/**
 * Values to try where the generic other value is the default's twin (one tile is the canvas
 * painted whole), and the fields a value needs beside it to be read at all.
 */
const TRY: Readonly<Record<string, Readonly<Record<string, Record<string, unknown>>>>> = {
  '/outpainting/v1': { horizontal_tile: { horizontal_tile: 2 }, vertical_tile: { vertical_tile: 2 } },
  // Inpainting answers the picture at its own size, and an area under SDXL's range is sampled at
  // its native one: the generic 384 px height changes nothing, one inside the range does.
  '/sdxl/inpainting/v1': { height: { height: 1216 }, width: { width: 1216 } },
};

/** Every picture of the requests is this size, so a graph that follows its pictures' sizes can. */
const PICTURE = { width: 1280, height: 1024 };

/** The request compiled as the engine compiles it for a task, every picture's size known. */
function compileWithSizes(pipeline: string, extra: Record<string, unknown>): CompiledWorkflow {
  const input = validatedRequest(pipeline, { ...MINIMAL_REQUESTS[pipeline], ...extra });
  const images = uploadsOf(pipeline, input);
  const imageSizes = Object.fromEntries(
    Object.entries(images).map(([field, names]) => [
      field,
      typeof names === 'string' ? PICTURE : names.map(() => PICTURE),
    ]),
  );
  return compilerFor(pipeline)!.compile({
    input,
    seed: 1234,
    images,
    imageSizes,
    filenamePrefix: 'imagegen/task-1/img',
    checkpoints: {},
  });
}

interface Schema {
  type?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  items?: Schema;
  default?: unknown;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  exclusiveMaximum?: number;
  pattern?: string;
  'x-image'?: boolean;
}

/** A valid value of the schema other than `current`. */
function otherValue(schema: Schema, current: unknown): unknown {
  if (schema.anyOf) return otherValue(schema.anyOf.find((s) => s.type !== 'null')!, current);
  if (schema.enum) return schema.enum.find((v) => v !== current);
  if (schema['x-image']) return url('other.png');
  if (schema.type === 'array') {
    const item = otherValue(schema.items!, (current as unknown[] | undefined)?.[0]);
    return [item];
  }
  if (schema.type === 'boolean') return current !== true;
  if (schema.type === 'string') {
    if (schema.pattern?.startsWith('^#')) return '#fff';
    if (schema.pattern?.includes('0-9a-f')) return 'deadbeef';
    return 'other';
  }
  return otherNumber(schema, current);
}

/** A number inside the schema's bounds other than `current` (and other than 0 and 1 where it can). */
function otherNumber(schema: Schema, current: unknown): number {
  const integer = schema.type === 'integer';
  const low = schema.minimum ?? schema.exclusiveMinimum;
  const high = schema.maximum ?? schema.exclusiveMaximum;
  const valid = (v: number) =>
    (!integer || Number.isInteger(v)) &&
    v !== current &&
    (schema.minimum === undefined || v >= schema.minimum) &&
    (schema.exclusiveMinimum === undefined || v > schema.exclusiveMinimum) &&
    (schema.maximum === undefined || v <= schema.maximum) &&
    (schema.exclusiveMaximum === undefined || v < schema.exclusiveMaximum);
  const quarter = low !== undefined && high !== undefined ? low + (high - low) / 4 : undefined;
  const from = typeof current === 'number' ? current : (low ?? 0);
  const candidates = [quarter, from + 1, from - 1, from + 0.25, from - 0.25, (low ?? 0) + 1];
  const found = candidates
    .filter((v): v is number => v !== undefined)
    .map((v) => (integer ? Math.round(v) : v))
    .find(valid);
  if (found === undefined) throw new Error(`no other value for ${JSON.stringify(schema)}`);
  return found;
}

describe('every request field', () => {
  for (const compiler of COMPILERS) {
    const pipeline = compiler.pipeline;
    const properties = requestProperties<Schema>(pipeline);
    const base = { ...MINIMAL_REQUESTS[pipeline], ...BASE[pipeline] };
    const baseline = JSON.stringify(compileWithSizes(pipeline, BASE[pipeline] ?? {}).prompt);
    const fields = Object.keys(properties).filter(
      (f) => !NOT_PICTURE.has(f) && !(NOT_PICTURE_HERE[pipeline] ?? []).includes(f),
    );
    const ignores = compiler.requires.ignores ?? [];
    it(`of ${pipeline} changes the graph, is noted as the original's own pipeline ignored it, or is refused as declared`, () => {
      expect(fields.length).toBeGreaterThan(0);
      for (const field of fields) {
        const schema = properties[field]!;
        const sent = TRY[pipeline]?.[field] ?? { [field]: otherValue(schema, base[field] ?? schema.default) };
        let outcome: string;
        try {
          const compiled = compileWithSizes(pipeline, { ...BASE[pipeline], ...sent });
          const noted = (compiled.notes ?? []).find((note) => note.startsWith(`${field}: `));
          outcome =
            JSON.stringify(compiled.prompt) !== baseline
              ? 'mapped'
              : noted && ignores.some((i) => i.field === field && noted.includes(i.why))
                ? 'noted'
                : `accepted and dropped${noted ? ` (noted but not listed in requires.ignores: ${noted})` : ''}`;
        } catch (error) {
          expect(error, field).toBeInstanceOf(EngineInputError);
          // A value the engine cannot draw (an unknown model id, weights for no LoRA) fails naming
          // the field: read, and refused out loud, never dropped.
          const message = (error as Error).message;
          outcome = message.startsWith(`${field}: `) ? 'refused' : message;
        }
        expect([field, outcome]).toEqual([field, expect.stringMatching(/^(mapped|noted|refused)$/)]);
      }
    });
  }
});

describe('the graph of a request', () => {
  it('maps each contract scheduler to its sampler and scheduler, and knows no other', () => {
    const contract = requestProperties<Schema>('/sd/text2image/v1')['scheduler']?.enum;
    expect(Object.keys(SCHEDULER_SAMPLING).sort()).toEqual([...(contract as string[])].sort());
    for (const [scheduler, sampling] of Object.entries(SCHEDULER_SAMPLING)) {
      // LCM samples with its LoRA, which the checkpoint map names.
      const [sampler] = nodesOf(
        compileRequest('/sd/text2image/v1', { scheduler }, { checkpoints: LCM_LORAS }),
        'KSampler',
      );
      expect(sampler?.inputs).toMatchObject(sampling);
    }
    expect(SCHEDULER_SAMPLING['DDIMScheduler']).toEqual({ sampler_name: 'ddim', scheduler: 'ddim_uniform' });
  });

  it('sends steps, guidance, seed, size, batch and prompts where KSampler and the latent read them', () => {
    const workflow = compileRequest(
      '/sdxl/text2image/v1',
      {
        num_inference_steps: 12,
        guidance_scale: 3.5,
        width: 1152,
        height: 896,
        samples: 3,
        prompt: 'a fox',
        negative_prompt: 'rain',
      },
      { seed: 987654321 },
    );
    const [sampler] = nodesOf(workflow, 'KSampler');
    expect(sampler?.inputs).toMatchObject({ steps: 12, cfg: 3.5, seed: 987654321, denoise: 1 });
    expect(nodesOf(workflow, 'EmptyLatentImage')[0]?.inputs).toEqual({
      width: 1152,
      height: 896,
      batch_size: 3,
    });
    expect(nodesOf(workflow, 'CLIPTextEncode').map((n) => n.inputs['text'])).toEqual(['a fox', 'rain']);
    expect(nodesOf(workflow, 'CheckpointLoaderSimple')[0]?.inputs['ckpt_name']).toBe(
      'sd_xl_base_1.0.safetensors',
    );
    expect(workflow.checkpoint).toBe('sd_xl_base_1.0.safetensors');
    expect(workflow.samplingSteps).toEqual([{ node: sampler?.id, steps: 12 }]);
  });

  it('resolves model_id through the checkpoint map, and names model_id with the known ids when it cannot', () => {
    const mapped = compileRequest(
      '/sd/text2image/v1',
      { model_id: 'my-finetune' },
      { checkpoints: { 'my-finetune': 'ft.safetensors', 'sd1.5': 'random-sd15.safetensors' } },
    );
    expect(mapped.checkpoint).toBe('ft.safetensors');
    expect(
      compileRequest('/sd/text2image/v1', {}, { checkpoints: { 'sd1.5': 'random-sd15.safetensors' } })
        .checkpoint,
    ).toBe('random-sd15.safetensors');
    expect(() =>
      compileRequest('/sd/text2image/v1', { model_id: 'nope' }, { checkpoints: { mine: 'm.safetensors' } }),
    ).toThrow(
      new EngineInputError(
        "model_id: unknown model id 'nope'; this server knows 'mine', 'sd1.5', 'sdxl', 'sdxl-lightning' (COMFYUI_CHECKPOINTS maps model ids to checkpoint files)",
      ),
    );
  });

  it('skips CLIP layers as clip_skip asks: Generate v1 (SD1.5) by its default of 2, Generate v2 (SDXL) keeps its own layer', () => {
    expect(
      nodesOf(compileRequest('/sd/text2image/v1', { clip_skip: 2 }), 'CLIPSetLastLayer')[0]?.inputs,
    ).toMatchObject({
      stop_at_clip_layer: -2,
    });
    expect(nodesOf(compileRequest('/sd/text2image/v1'), 'CLIPSetLastLayer')).toEqual([]);
    expect(nodesOf(compileRequest('/generate/v1'), 'CLIPSetLastLayer')[0]?.inputs).toMatchObject({
      stop_at_clip_layer: -2,
    });
    expect(nodesOf(compileRequest('/generate/v2', { clip_skip: 2 }), 'CLIPSetLastLayer')).toEqual([]);
  });

  it('chains one LoraLoader per LoRA with its weight, and the sampler uses the last', () => {
    const workflow = compileRequest('/sd/text2image/v1', {
      lora_models: ['a', 'b.ckpt'],
      lora_weights: [0.5, -2],
    });
    const loras = nodesOf(workflow, 'LoraLoader');
    expect(
      loras.map((l) => [l.inputs['lora_name'], l.inputs['strength_model'], l.inputs['strength_clip']]),
    ).toEqual([
      ['a.safetensors', 0.5, 0.5],
      ['b.ckpt', -2, -2],
    ]);
    expect(loras[1]?.inputs['model']).toEqual([loras[0]?.id, 0]);
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs['model']).toEqual([loras[1]?.id, 0]);
    expect(nodesOf(workflow, 'CLIPTextEncode')[0]?.inputs['clip']).toEqual([loras[1]?.id, 1]);
    expect(
      nodesOf(compileRequest('/generate/v3', { lora_models: ['flux-style'] }), 'LoraLoaderModelOnly')[0]
        ?.inputs,
    ).toMatchObject({
      lora_name: 'flux-style.safetensors',
      strength_model: 1,
    });
  });

  it('refuses LoRA weights that do not pair up with the models, naming lora_weights', () => {
    expect(() => compileRequest('/sd/text2image/v1', { lora_models: ['a', 'b'], lora_weights: [1] })).toThrow(
      /^lora_weights: 1 weight\(s\) for 2 LoRA model\(s\)/,
    );
  });

  it('writes embeddings into the prompt as ComfyUI reads them, and refuses names it cannot read', () => {
    const [positive] = nodesOf(
      compileRequest('/sd/text2image/v1', { prompt: 'a cat', embeddings: ['style-a', 'b.pt'] }),
      'CLIPTextEncode',
    );
    expect(positive?.inputs['text']).toBe('a cat embedding:style-a embedding:b.pt');
    expect(() => compileRequest('/sd/text2image/v1', { embeddings: ['two words'] })).toThrow(
      /^embeddings: 'two words'/,
    );
  });

  it('starts image2image from the encoded picture at strength, one copy per sample', () => {
    const workflow = compileRequest('/sd/image2image/v1', {
      strength: 0.35,
      samples: 2,
      width: 512,
      height: 768,
    });
    expect(nodesOf(workflow, 'LoadImage')[0]?.inputs['image']).toBe('init.png');
    expect(nodesOf(workflow, 'ImageScale')[0]?.inputs).toMatchObject({ width: 512, height: 768 });
    expect(nodesOf(workflow, 'RepeatLatentBatch')[0]?.inputs['amount']).toBe(2);
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs['denoise']).toBe(0.35);
  });

  it('inpaints with the red channel of the mask picture, scaled like the picture', () => {
    const workflow = compileRequest('/sd/inpainting/v1', { strength: 0.9 });
    expect(nodesOf(workflow, 'LoadImage').map((n) => n.inputs['image'])).toEqual(['init.png', 'mask.png']);
    expect(nodesOf(workflow, 'ImageToMask')[0]?.inputs['channel']).toBe('red');
    const [conditioning] = nodesOf(workflow, 'InpaintModelConditioning');
    expect(conditioning?.inputs['noise_mask']).toBe(true);
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs).toMatchObject({
      positive: [conditioning?.id, 0],
      negative: [conditioning?.id, 1],
      latent_image: [conditioning?.id, 2],
      denoise: 0.9,
    });
  });

  it('applies each canny controlnet on its Canny edges with its weight, start and end', () => {
    const workflow = compileRequest('/sd/controlnet/v1', {
      controlnets: ['canny', 'canny'],
      init_images: [url('control-0.png'), url('control-1.png')],
      controlnet_weights: [0.3, 1.5],
      starting_control_steps: [0, 0.2],
      ending_control_steps: [0.6, 1],
    });
    const applied = nodesOf(workflow, 'ControlNetApplyAdvanced');
    expect(
      applied.map((a) => [a.inputs['strength'], a.inputs['start_percent'], a.inputs['end_percent']]),
    ).toEqual([
      [0.3, 0, 0.6],
      [1.5, 0.2, 1],
    ]);
    expect(nodesOf(workflow, 'Canny')).toHaveLength(2);
    expect(nodesOf(workflow, 'ControlNetLoader')[0]?.inputs['control_net_name']).toBe(
      'control_v11p_sd15_canny.pth',
    );
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs['positive']).toEqual([applied[1]?.id, 0]);
    const sdxl = compileRequest('/sdxl/text2image/v1', {
      controlnets: ['canny'],
      control_image: url('control-0.png'),
    });
    expect(nodesOf(sdxl, 'ControlNetLoader')[0]?.inputs['control_net_name']).toBe(
      'controlnet-canny-sdxl-1.0.safetensors',
    );
  });

  it('makes the pose and depth pictures with the comfyui_controlnet_aux preprocessors, at resolution', () => {
    const pose = compileRequest('/sd/controlnet/v1', { controlnets: ['openpose'], resolution: 768 });
    expect(nodesOf(pose, 'OpenposePreprocessor')[0]?.inputs).toMatchObject({
      resolution: 768,
      detect_body: 'enable',
      detect_hand: 'enable',
      detect_face: 'enable',
    });
    expect(nodesOf(pose, 'ControlNetLoader')[0]?.inputs['control_net_name']).toBe(
      'control_v11p_sd15_openpose.pth',
    );
    const depth = compileRequest('/sdxl/text2image/v1', {
      controlnets: ['depth', 'canny'],
      control_image: url('control-0.png'),
    });
    expect(nodesOf(depth, 'MiDaS-DepthMapPreprocessor')[0]?.inputs['resolution']).toBe(1024);
    expect(nodesOf(depth, 'Canny')).toHaveLength(1);
    // One photo, loaded once, preprocessed once per kind.
    expect(nodesOf(depth, 'LoadImage')).toHaveLength(1);
    expect(nodesOf(depth, 'ControlNetLoader').map((n) => n.inputs['control_net_name'])).toEqual([
      'controlnet-depth-sdxl-1.0.safetensors',
      'controlnet-canny-sdxl-1.0.safetensors',
    ]);
    // Canny takes no working size: drawn, and noted (diffusers' pipelines take no notice either).
    expect(compileRequest('/sd/controlnet/v1', { controlnets: ['canny'], resolution: 512 }).notes).toEqual([
      "resolution: sets the openpose and depth preprocessors' working size; Canny has none, so it is not used",
    ]);
  });

  it('refuses controlnets without their picture, and notes their settings without controlnets', () => {
    expect(() => compileRequest('/sd/text2image/v1', { controlnets: ['depth'] })).toThrow(
      /^controlnets: needs a control picture in control_image/,
    );
    const alone = compileRequest('/sd/text2image/v1', {
      control_image: url('control-0.png'),
      resolution: 512,
    });
    expect(nodesOf(alone, 'ControlNetApplyAdvanced')).toEqual([]);
    expect(alone.notes).toEqual([
      'control_image: is only used with controlnets, and none is named, so it is not used',
      'resolution: is only used with controlnets, and none is named, so it is not used',
    ]);
    // The same with IP-Adapter's fields without an adapter.
    expect(compileRequest('/sd/text2image/v1', { ip_adapter_image: url('init.png') }).notes).toEqual([
      'ip_adapter_image: is only used with ip_adapter, and none is named, so it is not used',
    ]);
    expect(() => compileRequest('/sd/controlnet/v1', { controlnet_weights: [1, 1] })).toThrow(
      /^controlnet_weights: 2 value\(s\) for 1/,
    );
    expect(() =>
      compileRequest('/sd/controlnet/v1', { starting_control_steps: [0.8], ending_control_steps: [0.2] }),
    ).toThrow(/^starting_control_steps: /);
  });

  it("samples on the latent grid within the model's budget and scales to exactly the size asked", () => {
    // 1 x 333 is past any ratio SD1.5 draws: its most extreme one (its 64 to 1024 px sides).
    const workflow = compileRequest('/sd/text2image/v1', { width: 1, height: 333 });
    expect(nodesOf(workflow, 'EmptyLatentImage')[0]?.inputs).toMatchObject({ width: 64, height: 1024 });
    expect(nodesOf(workflow, 'ImageScale')[0]?.inputs).toMatchObject({ width: 1, height: 333 });
    expect(nodesOf(compileRequest('/sd/text2image/v1', { width: 512, height: 512 }), 'ImageScale')).toEqual(
      [],
    );
    // 520 x 392 is inside SD1.5's range: sampled as asked, on the grid, then scaled to 520 x 392.
    const inside = compileRequest('/sd/text2image/v1', { width: 520, height: 390 });
    expect(nodesOf(inside, 'EmptyLatentImage')[0]?.inputs).toMatchObject({ width: 520, height: 392 });
    expect(nodesOf(inside, 'ImageScale')[0]?.inputs).toMatchObject({ width: 520, height: 390 });
    // Flux draws 0.25 to 2 megapixels: 100 x 1000 is sampled at its megapixel, its longest side 2048.
    const flux = compileRequest('/generate/v3', { width: 100, height: 1000 });
    expect(nodesOf(flux, 'EmptySD3LatentImage')[0]?.inputs).toMatchObject({ width: 208, height: 2048 });
    expect(nodesOf(flux, 'ImageScale')[0]?.inputs).toMatchObject({ width: 100, height: 1000 });
  });

  it('runs hires as a second pass at part strength on an enlarged latent, and counts its steps', () => {
    const workflow = compileRequest('/sd/text2image/v1', {
      hires: true,
      num_inference_steps: 10,
      width: 512,
      height: 512,
    });
    const samplers = nodesOf(workflow, 'KSampler');
    expect(samplers.map((s) => s.inputs['denoise'])).toEqual([1, HIRES_DENOISE]);
    expect(nodesOf(workflow, 'LatentUpscale')[0]?.inputs).toMatchObject({
      upscale_method: 'nearest-exact',
      width: 768,
      height: 768,
      crop: 'disabled',
    });
    expect(workflow.samplingSteps.map((s) => s.steps)).toEqual([10, 10]);
    expect(nodesOf(workflow, 'ImageScale')).toEqual([]);
    // 520 x 1.5 = 780 px is not whole latent blocks: the decoded 784 px are scaled to 780.
    const odd = compileRequest('/sd/text2image/v1', { hires: true, width: 520, height: 512 });
    expect(nodesOf(odd, 'ImageScale')[0]?.inputs).toMatchObject({ width: 780, height: 768 });
  });

  it('upscales with the model, then to exactly the factor asked', () => {
    const workflow = compileRequest('/sd/text2image/v1', { upscale: '2x' });
    expect(nodesOf(workflow, 'UpscaleModelLoader')[0]?.inputs['model_name']).toBe('RealESRGAN_x4plus.pth');
    expect(nodesOf(workflow, 'ImageScaleBy')[0]?.inputs['scale_by']).toBe(0.5);
    expect(nodesOf(compileRequest('/sd/text2image/v1', { upscale: '4x' }), 'ImageScaleBy')).toEqual([]);
    expect(() => compileRequest('/sd/text2image/v1', { upscale: '8x' })).toThrow(
      /^upscale: '8x' is not an upscale factor/,
    );
    const sr = compileRequest('/superresolution/v1', { model_name: 'RealESRGAN_x2plus', scale_factor: 3 });
    expect(nodesOf(sr, 'UpscaleModelLoader')[0]?.inputs['model_name']).toBe('RealESRGAN_x2plus.pth');
    expect(nodesOf(sr, 'ImageScaleBy')[0]?.inputs['scale_by']).toBe(1.5);
  });

  it('runs SD3 and SD3.5 on their checkpoints with three text encoders and the SD3 shift', () => {
    for (const [pipeline, file] of [
      ['/sd3/v1', 'sd3_medium.safetensors'],
      ['/sd3_5/v1', 'sd3.5_large.safetensors'],
    ] as const) {
      const workflow = compileRequest(pipeline, { guidance_scale: 0 });
      expect(workflow.checkpoint).toBe(file);
      expect(nodesOf(workflow, 'TripleCLIPLoader')).toHaveLength(1);
      expect(nodesOf(workflow, 'ModelSamplingSD3')[0]?.inputs['shift']).toBe(3);
      expect(nodesOf(workflow, 'KSampler')[0]?.inputs['cfg']).toBe(0);
    }
  });

  it('runs Flux Schnell at /generate/v3 by default: its loaders, 4 steps, cfg 1, euler on simple, no guidance', () => {
    const workflow = compileRequest('/generate/v3');
    expect(nodesOf(workflow, 'UNETLoader')[0]?.inputs).toMatchObject({
      unet_name: 'flux1-schnell.safetensors',
      weight_dtype: 'default',
    });
    expect(nodesOf(workflow, 'DualCLIPLoader')[0]?.inputs).toMatchObject({
      clip_name1: 't5xxl_fp16.safetensors',
      clip_name2: 'clip_l.safetensors',
      type: 'flux',
    });
    expect(nodesOf(workflow, 'VAELoader')[0]?.inputs['vae_name']).toBe('ae.safetensors');
    expect(nodesOf(workflow, 'CheckpointLoaderSimple')).toEqual([]);
    expect(nodesOf(workflow, 'FluxGuidance')).toEqual([]);
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs).toMatchObject({
      steps: 4,
      cfg: 1,
      sampler_name: 'euler',
      scheduler: 'simple',
    });
    expect(nodesOf(workflow, 'EmptySD3LatentImage')[0]?.inputs).toMatchObject({
      width: 1024,
      height: 1024,
      batch_size: 2,
    });
    expect(workflow.checkpoint).toBe('flux1-schnell.safetensors');
    // Steps sent other than the default are run as sent.
    const two = compileRequest('/generate/v3', { num_inference_steps: 2 });
    expect(nodesOf(two, 'KSampler')[0]?.inputs['steps']).toBe(2);
  });

  it("runs Flux Dev once COMFYUI_CHECKPOINTS maps flux-dev: guidance_scale is its guidance, the API's default its 3.5", () => {
    const dev = { checkpoints: { 'flux-dev': 'flux1-dev.safetensors' } };
    const workflow = compileRequest('/generate/v3', {}, dev);
    expect(nodesOf(workflow, 'UNETLoader')[0]?.inputs['unet_name']).toBe('flux1-dev.safetensors');
    expect(nodesOf(workflow, 'FluxGuidance')[0]?.inputs['guidance']).toBe(3.5);
    expect(nodesOf(workflow, 'KSampler')[0]?.inputs).toMatchObject({
      steps: 30,
      cfg: 1,
      sampler_name: 'euler',
      scheduler: 'simple',
      positive: [nodesOf(workflow, 'FluxGuidance')[0]?.id, 0],
    });
    expect(workflow.checkpoint).toBe('flux1-dev.safetensors');
    // A value sent is Dev's own guidance: 3.5 is Dev's 3.5, not the API's default scaled down.
    for (const guidance of [3.5, 2, 15]) {
      const sent = compileRequest('/generate/v3', { guidance_scale: guidance }, dev);
      expect(nodesOf(sent, 'FluxGuidance')[0]?.inputs['guidance']).toBe(guidance);
    }
    // ModelSamplingFlux's shift follows the sampled size, as the dev example sets it.
    expect(nodesOf(workflow, 'ModelSamplingFlux')[0]?.inputs).toMatchObject({
      max_shift: 1.15,
      base_shift: 0.5,
      width: 1024,
      height: 1024,
    });
    const mapped = compileRequest('/generate/v3', {}, { checkpoints: { 'flux-dev': 'my-dev.safetensors' } });
    expect(nodesOf(mapped, 'UNETLoader')[0]?.inputs['unet_name']).toBe('my-dev.safetensors');
    const schnell = compileRequest(
      '/generate/v3',
      {},
      { checkpoints: { 'flux-schnell': 'fast.safetensors' } },
    );
    expect(nodesOf(schnell, 'UNETLoader')[0]?.inputs['unet_name']).toBe('fast.safetensors');
    expect(nodesOf(schnell, 'FluxGuidance')).toEqual([]);
  });

  it('applies style as a prompt style on Flux and on Generate v1, and null leaves the prompt alone', () => {
    const texts = (workflow: CompiledWorkflow) =>
      nodesOf(workflow, 'CLIPTextEncode').map((node) => node.inputs['text']);
    const portrait = PROMPT_STYLES['realistic_portrait']!;
    // Flux reads no negative prompt: it is the prompt's conditioning zeroed, not a T5 pass.
    expect(texts(compileRequest('/generate/v3'))).toEqual([`a lighthouse at dusk, ${portrait.positive}`]);
    expect(texts(compileRequest('/generate/v3', { style: null }))).toEqual(['a lighthouse at dusk']);
    expect(texts(compileRequest('/generate/v3', { style: 'ghibli' }))[0]).toBe(
      `a lighthouse at dusk, ${PROMPT_STYLES['ghibli']!.positive}`,
    );
    expect(texts(compileRequest('/generate/v1'))).toEqual([
      `a lighthouse at dusk, ${portrait.positive}`,
      portrait.negative,
    ]);
    const anime = PROMPT_STYLES['cartoon_anime']!;
    expect(
      texts(compileRequest('/generate/v1', { style: 'cartoon_anime', negative_prompt: 'blurry' })),
    ).toEqual([`a lighthouse at dusk, ${anime.positive}`, `blurry, ${anime.negative}`]);
  });

  it('runs Generate v1 on SD1.5 (512 px, 4 samples, 30 steps) and Generate v2 on SDXL (1024 px, 1, 20)', () => {
    for (const [pipeline, checkpoint, side, samples, steps] of [
      ['/generate/v1', 'v1-5-pruned-emaonly.safetensors', 512, 4, 30],
      ['/generate/v2', 'sd_xl_base_1.0.safetensors', 1024, 1, 20],
    ] as const) {
      const workflow = compileRequest(pipeline);
      expect(workflow.checkpoint, pipeline).toBe(checkpoint);
      expect(nodesOf(workflow, 'EmptyLatentImage')[0]?.inputs, pipeline).toMatchObject({
        width: side,
        height: side,
        batch_size: samples,
      });
      expect(nodesOf(workflow, 'KSampler')[0]?.inputs, pipeline).toMatchObject({ steps, cfg: 7.5 });
    }
    expect(nodesOf(compileRequest('/generate/v2'), 'CLIPSetLastLayer')).toEqual([]);
  });

  it('pads outpainting per direction and expansion, and refuses expansions that do not pair up', () => {
    const workflow = compileRequest('/outpainting/v1', {
      direction: ['left', 'up', 'left'],
      expansion: [64, 32, 8],
    });
    expect(nodesOf(workflow, 'ImagePadForOutpaint')[0]?.inputs).toMatchObject({
      left: 72,
      top: 32,
      right: 0,
      bottom: 0,
    });
    expect(() =>
      compileRequest('/outpainting/v1', { direction: ['left', 'up'], expansion: [64, 32, 8] }),
    ).toThrow(/^expansion: 3 value\(s\) for 2 direction\(s\)/);
  });

  it('answers deblur with the upscaler alone and variation with a diffusion pass over it', () => {
    const deblur = compileRequest('/upscaler/v1', { type: 'deblur' });
    expect(Object.values(deblur.prompt).map((n) => n.class_type)).toEqual([
      'LoadImage',
      'UpscaleModelLoader',
      'ImageUpscaleWithModel',
      'SaveImage',
    ]);
    expect(deblur.samplingSteps).toEqual([]);
    const variation = compileRequest('/upscaler/v1', { type: 'variation', prompt: 'sharp' });
    expect(nodesOf(variation, 'KSampler')[0]?.inputs['denoise']).toBeLessThan(1);
    expect(nodesOf(variation, 'CLIPTextEncode')[0]?.inputs['text']).toBe('sharp');
  });

  it("loads an uploaded adapter in ip_adapter from the owner's models, as their LoRAs, and refuses what is not one", () => {
    const id = '0123456789abcdef0123456789abcdef';
    const adapter = (fields: Partial<JobModel> = {}): JobModel => ({
      modelId: id,
      modelType: 'adapter',
      baseModel: 'sd1.5',
      extension: 'bin',
      url: null,
      ...fields,
    });
    const request = {
      ip_adapter: [id, 'ip-adapter_sd15'],
      ip_adapter_image: url('init.png'),
      ip_adapter_scale: [0.4, 0.7],
    };
    const workflow = compileRequest('/sd/text2image/v1', request, { models: { [id]: adapter() } });
    expect(nodesOf(workflow, 'IPAdapterModelLoader').map((n) => n.inputs['ipadapter_file'])).toEqual([
      `${id}.bin`,
      'ip-adapter_sd15.safetensors',
    ]);
    expect(nodesOf(workflow, 'CLIPVisionLoader')[0]?.inputs['clip_name']).toBe(
      'CLIP-ViT-H-14-laion2B-s32B-b79K.safetensors',
    );
    expect(nodesOf(workflow, 'IPAdapterAdvanced').map((n) => n.inputs['weight'])).toEqual([0.4, 0.7]);
    // Not one of the owner's (another owner's id resolves to nothing), another type, another family.
    expect(() => compileRequest('/sd/text2image/v1', request)).toThrow(
      new EngineInputError(`ip_adapter: '${id}' is not one of your loaded models`),
    );
    expect(() =>
      compileRequest('/sd/text2image/v1', request, { models: { [id]: adapter({ modelType: 'lora' }) } }),
    ).toThrow(new EngineInputError(`ip_adapter: model '${id}' is a lora, not an adapter`));
    expect(() =>
      compileRequest('/sd/text2image/v1', request, { models: { [id]: adapter({ baseModel: 'sdxl' }) } }),
    ).toThrow(
      /^ip_adapter: model '0123456789abcdef0123456789abcdef' is a sdxl adapter; this pipeline takes sd1\.5 models$/,
    );
  });

  it('fails, naming the field, where the engine cannot draw what a value asks', () => {
    const refusals: [string, Record<string, unknown>, string][] = [
      ['/sd/text2image/v1', { ip_adapter: ['ip-adapter_sd15'] }, 'ip_adapter'],
      ['/sd/text2image/v1', { ip_adapter: ['0123abcd'], ip_adapter_image: url('init.png') }, 'ip_adapter'],
      [
        '/sd/text2image/v1',
        { ip_adapter: ['ip-adapter_sd15'], ip_adapter_image: url('init.png'), ip_adapter_scale: [0.5, 0.5] },
        'ip_adapter_scale',
      ],
      [
        '/sdxl/text2image/v1',
        {
          ip_adapter: ['ip-adapter_sdxl'],
          ip_adapter_image: url('init.png'),
          ip_adapter_mask_images: [url('mask.png'), url('mask.png')],
        },
        'ip_adapter_mask_images',
      ],
      ['/generate/v3', { style: 'nsfw' }, 'style'],
      ['/superresolution/v1', { model_name: '0123abcd' }, 'model_name'],
    ];
    for (const [pipeline, extra, field] of refusals) {
      expect(() => compileRequest(pipeline, extra), `${pipeline} ${field}`).toThrow(
        expect.objectContaining({
          name: 'EngineInputError',
          message: expect.stringMatching(new RegExp(`^${field}: `)),
        }),
      );
    }
  });

  it("saves each task's images under its own prefix, so two tasks' graphs differ there", () => {
    // A text result (image2prompt's caption) is no file: another task's cached text of the same picture is the same text.
    for (const compiler of COMPILERS.filter((c) => c.requires.nodes.includes('SaveImage'))) {
      const [a, b] = ['imagegen/task-a/img', 'imagegen/task-b/img'].map((filenamePrefix) =>
        compileRequest(compiler.pipeline, {}, { filenamePrefix }),
      );
      const prefixes = [a!, b!].map((w) =>
        w.outputNodes.map((id) => w.prompt[id]?.inputs['filename_prefix']),
      );
      expect(prefixes, compiler.pipeline).toEqual([['imagegen/task-a/img'], ['imagegen/task-b/img']]);
      expect(JSON.stringify(a!.prompt).replaceAll('task-a', 'task-b')).toBe(JSON.stringify(b!.prompt));
    }
  });

  it('samples photomaker from the prompt without the trigger word up to start_merge_step, then with the face', () => {
    const workflow = compileRequest('/photomaker/v1', {
      prompt: 'a woman img, smiling',
      num_inference_steps: 10,
      start_merge_step: 3,
    });
    const [early, late] = nodesOf(workflow, 'KSamplerAdvanced');
    expect([early?.inputs['start_at_step'], early?.inputs['end_at_step']]).toEqual([0, 4]);
    expect([late?.inputs['start_at_step'], late?.inputs['end_at_step']]).toEqual([4, 10]);
    expect(early?.inputs['return_with_leftover_noise']).toBe('enable');
    expect(late?.inputs['add_noise']).toBe('disable');
    const text = (link: unknown) => workflow.prompt[(link as [string, number])[0]]!.inputs['text'];
    expect(text(early?.inputs['positive'])).toBe('a woman, smiling');
    // ComfyUI's PhotoMakerEncode finds its trigger word by splitting the prompt on spaces.
    expect(String(text(late?.inputs['positive'])).split(' ')).toContain('photomaker');
    expect(workflow.prompt[(late!.inputs['positive'] as [string, number])[0]]!.class_type).toBe(
      'PhotoMakerEncode',
    );
    expect(workflow.samplingSteps.map((s) => s.steps)).toEqual([4, 6]);

    const noMerge = compileRequest('/photomaker/v1', { num_inference_steps: 5, start_merge_step: 30 });
    expect(nodesOf(noMerge, 'KSamplerAdvanced')).toHaveLength(1);
    expect(nodesOf(noMerge, 'PhotoMakerEncode')).toHaveLength(0);
  });

  it('maps each try-on to the clothes parser classes of its garment, one CatVTON run per sample', () => {
    const classes = (pipeline: string) =>
      Object.entries(nodesOf(compileRequest(pipeline), 'ClothesSegment')[0]!.inputs)
        .filter(([, value]) => value === true)
        .map(([name]) => name)
        .sort();
    // CatVTON's masker: the clothes that may be replaced and the body under them (arms, legs).
    expect(classes('/fashion_upper/v1')).toEqual(['Dress', 'Left-arm', 'Right-arm', 'Upper-clothes']);
    expect(classes('/fashion_lower/v1')).toEqual(['Dress', 'Left-leg', 'Pants', 'Right-leg', 'Skirt']);
    expect(classes('/fashion_dress/v1')).toEqual([
      'Dress',
      'Left-arm',
      'Left-leg',
      'Pants',
      'Right-arm',
      'Right-leg',
      'Skirt',
      'Upper-clothes',
    ]);
    const runs = nodesOf(compileRequest('/fashion_dress/v1', { samples: 3 }, { seed: 7 }), 'CatVTONWrapper');
    expect(runs.map((run) => run.inputs['seed'])).toEqual([7, 8, 9]);
  });

  it('segments the object at input_coords and fills, replaces or removes it', () => {
    const graph = (operation: string) =>
      compileRequest('/inpaint_anything/v1', { operation, input_coords: [10, 20, 30, 40] });
    const fill = graph('fill');
    expect(JSON.parse(String(nodesOf(fill, 'Sam2Segmentation')[0]!.inputs['coordinates_positive']))).toEqual([
      { x: 10, y: 20 },
      { x: 30, y: 40 },
    ]);
    expect(nodesOf(fill, 'GrowMask')[0]!.inputs['expand']).toBe(50);
    expect(nodesOf(fill, 'InpaintModelConditioning')).toHaveLength(1);
    const replace = graph('replace');
    expect(nodesOf(replace, 'InvertMask')).toHaveLength(1);
    expect(nodesOf(replace, 'GrowMask')).toHaveLength(0);
    const remove = graph('remove');
    expect(nodesOf(remove, 'AILab_LamaRemover')).toHaveLength(1);
    expect(nodesOf(remove, 'KSampler')).toHaveLength(0);
    expect(nodesOf(remove, 'GrowMask')[0]!.inputs['expand']).toBe(15);
  });

  it("loads SAM 2 on the server's own device: fp16 on CUDA, fp32 where the loader refuses fp16 or MPS", () => {
    const loader = (device?: string) => {
      const graph = compileRequest(
        '/inpaint_anything/v1',
        { input_coords: [10, 20] },
        device ? { device } : {},
      );
      const { device: on, precision } = nodesOf(graph, 'DownloadAndLoadSAM2Model')[0]!.inputs;
      return [on, precision];
    };
    // Before a server is picked (or one that never said), a CUDA server is assumed.
    expect(loader()).toEqual(['cuda', 'fp16']);
    expect(loader('cuda')).toEqual(['cuda', 'fp16']);
    expect(loader('cpu')).toEqual(['cpu', 'fp32']);
    expect(loader('mps')).toEqual(['mps', 'fp32']);
    // A device the node has no name for (an Intel XPU): the CPU, which every server has.
    expect(loader('xpu')).toEqual(['cpu', 'fp32']);
  });

  it('keeps the subject of bgchanger and modelswitch pixel for pixel, repainting only around it', () => {
    for (const pipeline of ['/bgchanger/v1', '/modelswitch/v1']) {
      const workflow = compileRequest(pipeline);
      const [composite] = nodesOf(workflow, 'ImageCompositeMasked');
      const source = (link: unknown) => workflow.prompt[(link as [string, number])[0]]!.class_type;
      expect(source(composite!.inputs['destination']), pipeline).toBe('LoadImage');
      expect(source(composite!.inputs['source']), pipeline).toBe('VAEDecode');
      expect(composite!.inputs['resize_source'], pipeline).toBe(true);
      const [conditioning] = nodesOf(workflow, 'InpaintModelConditioning');
      expect(conditioning!.inputs['mask'], pipeline).toEqual(composite!.inputs['mask']);
    }
    const styled = compileRequest('/bgchanger/v1', { style_image: url('control-1.png') });
    expect(nodesOf(styled, 'IPAdapterAdvanced').map((n) => n.inputs['weight_type'])).toEqual([
      'style transfer',
    ]);
    expect(
      nodesOf(compileRequest('/modelswitch/v1', { input_face: url('control-0.png') }), 'ReActorFaceSwap'),
    ).toHaveLength(1);
  });

  it("writes every setting of ComfyUI-RMBG's RMBG node, which reads its optional inputs without defaults", () => {
    const settings = Object.keys(NODE_TYPES.RMBG.optional);
    for (const pipeline of ['/relight/v1', '/bgchanger/v1', '/modelswitch/v1']) {
      const [cut] = nodesOf(compileRequest(pipeline), 'RMBG');
      expect(cut?.inputs['model'], pipeline).toBe('RMBG-2.0');
      expect(Object.keys(cut?.inputs ?? {}), pipeline).toEqual(expect.arrayContaining(settings));
      expect(cut?.inputs['process_res'], pipeline).toBe(1024);
    }
  });

  it('mixes a second face into facelock v1 only with id_mix, concatenating both embeddings', () => {
    const mixed = compileRequest('/facelock/v1', {
      supp_image1: url('control-1.png'),
      id_mix: true,
      id_scale: 0.4,
    });
    const [faceId] = nodesOf(mixed, 'IPAdapterFaceID');
    expect(faceId!.inputs['combine_embeds']).toBe('concat');
    expect(faceId!.inputs['weight']).toBe(0.4);
    expect(mixed.prompt[(faceId!.inputs['image'] as [string, number])[0]]!.class_type).toBe('ImageBatch');
  });
});
