import { validatePrompt } from '@imagegen/comfyui-fake';
import { endpointByPath } from '@imagegen/contract';
import { EngineInputError } from '@imagegen/engines';
import { describe, expect, it } from 'vitest';
import { IP_ADAPTER_FILES } from '../src/chains/ip-adapter.ts';
import { COMPILERS } from '../src/compilers/index.ts';
import type { CompiledWorkflow, ImageSize, PipelineCompiler } from '../src/contracts.ts';
import {
  type CompileOptions,
  compileRequest,
  equippedServer,
  LCM_LORAS,
  MINIMAL_REQUESTS,
  requestProperties,
  TEST_LORAS,
  url,
} from './compile-request.ts';

/**
 * Every compiler, over requests that reach each part of its graph, compiled and put through
 * ComfyUI's own POST /prompt validation against the recorded node definitions: a graph the real
 * server would refuse fails here.
 */

interface Property {
  enum?: string[];
  maximum?: number;
  exclusiveMaximum?: number;
  minimum?: number;
  exclusiveMinimum?: number;
  type?: string;
  items?: Property;
}

const propertiesOf = (pipeline: string) => requestProperties<Property>(pipeline);

/** The smallest and largest value the contract lets through for a numeric field. */
function bounds(property: Property): [number, number] {
  const step = property.type === 'integer' ? 1 : 0.01;
  const low = property.minimum ?? (property.exclusiveMinimum ?? 0) + step;
  const high = property.maximum ?? (property.exclusiveMaximum ?? 1536 + step) - step;
  return [low, Number(high.toFixed(2))];
}

/** Requests that exercise each part of a pipeline's graph the request shape offers. */
function variants(pipeline: string): Record<string, Record<string, unknown>> {
  const has = propertiesOf(pipeline);
  const out: Record<string, Record<string, unknown>> = { defaults: {} };
  for (const scheduler of has['scheduler']?.enum ?? []) out[`scheduler ${scheduler}`] = { scheduler };
  for (const field of ['width', 'height', 'num_inference_steps', 'guidance_scale', 'samples', 'clip_skip']) {
    const property = has[field];
    if (!property) continue;
    const [low, high] = bounds(property);
    out[`${field} ${low}`] = { [field]: low };
    out[`${field} ${high}`] = { [field]: high };
  }
  if (has['width'] && has['height']) {
    const [, wide] = bounds(has['width']);
    out['an odd size'] = { width: 333, height: 77 };
    out['a size past one pass'] = { width: wide, height: Math.round(wide * 0.75) };
    out['the largest size, every sample'] = {
      width: wide,
      height: wide,
      ...(has['samples'] ? { samples: bounds(has['samples'])[1] } : {}),
    };
  }
  if (has['lora_models'])
    out.loras = { lora_models: ['detail-tweaker', TEST_LORAS[1]], lora_weights: [0.8, -1.5] };
  if (has['lora_models']) out['loras at weight 1'] = { lora_models: ['detail-tweaker'] };
  if (has['embeddings']) out.embeddings = { embeddings: ['easynegative', 'bad-hands-5'] };
  if (has['hires']) out.hires = { hires: true, width: 520, height: 776 };
  if (has['hires'] && has['init_image']) out['hires at a low strength'] = { hires: true, strength: 0.3 };
  if (has['upscale']) {
    for (const upscale of ['2x', '4x', '1.5x', '1x']) out[`upscale ${upscale}`] = { upscale };
    out['hires and upscale'] = { hires: true, upscale: '2x', samples: 2 };
  }
  if (has['strength'] && has['init_image'] && pipeline !== '/generate/v3') {
    out['strength low'] = { strength: 0.01 };
    out['strength 1'] = { strength: 1 };
  }
  if (has['control_image']) {
    out.controlnet = {
      controlnets: ['canny'],
      control_image: url('control-0.png'),
      controlnet_weights: [bounds(has['controlnet_weights']!.items!)[1]],
      starting_control_steps: [0.1],
      ending_control_steps: [0.9],
    };
  }
  if (has['init_images']) {
    out['two controlnets'] = {
      controlnets: ['canny', 'canny'],
      init_images: [url('control-0.png'), url('control-1.png')],
      controlnet_weights: [0, 0.5],
      starting_control_steps: [0, 0.5],
      ending_control_steps: [0.5, 1],
    };
    out['one picture for two controlnets'] = { controlnets: ['canny', 'canny'] };
    out['openpose and depth at a working size'] = {
      controlnets: ['openpose', 'depth', 'canny'],
      resolution: 512,
    };
    // Past the preprocessors' own range (64 to 16384), which the contract does not bound.
    out['openpose and depth at a working size of 1'] = { controlnets: ['openpose', 'depth'], resolution: 1 };
    out['openpose and depth at a working size of 100000'] = {
      controlnets: ['openpose', 'depth'],
      resolution: 100_000,
    };
  }
  if (has['control_image']) {
    out['openpose and depth'] = { controlnets: ['openpose', 'depth'], control_image: url('control-0.png') };
  }
  if (has['attn']) {
    out['style alignment'] = { attn: true, adain: true, style: 0.7, samples: 2 };
    out['style alignment without AdaIN, with hires'] = { style: 0.5, adain: false, samples: 3, hires: true };
  }
  if (has['mask_images']) {
    out['controlnet inpainting'] = { mask_images: [url('mask.png'), url('mask.png')], strength: 0.7 };
    out['controlnet inpainting with hires, every sample'] = {
      mask_images: [url('mask.png')],
      hires: true,
      samples: bounds(has['samples']!)[1],
    };
    out['controlnet inpainting with hires at a low strength'] = {
      mask_images: [url('mask.png')],
      hires: true,
      strength: 0.3,
    };
  }
  if (has['hidiffusion']) {
    out.hidiffusion = { hidiffusion: true };
    out['hidiffusion at a large size'] = { hidiffusion: true, width: 1536, height: 1280 };
  }
  if (has['ip_adapter']) {
    const family = pipeline.startsWith('/sdxl') || pipeline === '/generate/v2' ? 'sdxl' : 'sd15';
    const adapters = Object.keys(IP_ADAPTER_FILES).filter((name) => name.includes(family));
    out['ip adapters'] = {
      ip_adapter: adapters,
      ip_adapter_image: has['ip_adapter_mask_images']
        ? adapters.map((_, i) => url(i % 2 ? 'init.png' : 'control-0.png'))
        : url('init.png'),
      ip_adapter_scale: adapters.map((_, i) => (i + 1) / adapters.length),
    };
    out['ip adapter with style images'] = {
      ip_adapter: [adapters[0]],
      ip_adapter_style_images: [url('control-0.png'), url('control-1.png')],
      ip_adapter_scale: [0.6],
    };
    if (has['ip_adapter_mask_images']) {
      out['ip adapters with masks'] = {
        ip_adapter: adapters.slice(0, 2),
        ip_adapter_image: [url('init.png'), url('control-0.png')],
        ip_adapter_mask_images: [url('mask.png'), url('mask.png')],
      };
    }
  }
  if (pipeline === '/generate/v3') {
    out['dev: defaults'] = {};
    out['dev: the strongest guidance, image to image'] = {
      guidance_scale: 20,
      init_image: url('init.png'),
      strength: 0.6,
    };
    out['image to image'] = { init_image: url('init.png'), strength: 0.6 };
    out.inpainting = { init_image: url('init.png'), mask_image: url('mask.png'), strength: 1, samples: 4 };
    out['style null'] = { style: null };
    out.palette = { palette: ['#006400', '#FFD700', '', '#abc', ''] };
    out['guidance Schnell takes no notice of, and strength and a mask without a picture'] = {
      guidance_scale: 3.5,
      strength: 0.4,
      mask_image: url('mask.png'),
    };
  }
  if (pipeline === '/logo/v1') out['logo_prompt'] = { logo_prompt: 'a coffee cup with the word BEAN' };
  if (pipeline === '/outpainting/v1') {
    out['every direction'] = {
      direction: ['left', 'right', 'up', 'down'],
      expansion: [8, 16, 32, 256],
      samples: 4,
    };
    out['one expansion for all'] = { direction: ['up', 'down'], expansion: [128], strength: 0.5 };
    out['overlap, stretching and tiles'] = {
      direction: ['left', 'right', 'down'],
      expansion: [64],
      overlap: 0.02,
      stretch_area: 0.3,
      stretch_scale: 2,
      strength: 0.7,
      horizontal_tile: 2,
      vertical_tile: 2,
      samples: 2,
    };
    out['tiles every direction'] = {
      direction: ['left', 'right', 'up', 'down'],
      expansion: [256],
      horizontal_tile: 3,
      vertical_tile: 2,
    };
    out['a stretch only of the page'] = { direction: ['up'], expansion: [200], stretch_scale: 3 };
  }
  if (pipeline === '/relight/v1') {
    for (const light of has['light']?.enum ?? []) out[`light ${light}`] = { light };
  }
  if (pipeline === '/photomaker/v1') {
    out['one picture'] = { init_images: [url('control-0.png')] };
    out['merge step at the last step'] = { start_merge_step: 9, num_inference_steps: 10 };
    out['merge step past the last step'] = { start_merge_step: 30, num_inference_steps: 5 };
    out['trigger word before a comma'] = { prompt: 'a woman img, smiling' };
    out['LCM at its steps and guidance'] = {
      scheduler: 'LCMScheduler',
      num_inference_steps: 6,
      guidance_scale: 1.5,
    };
  }
  if (pipeline === '/facelock/v1') {
    out['two faces mixed'] = { supp_image1: url('control-1.png'), id_mix: true };
  }
  if (pipeline === '/bgchanger/v1') out['style image'] = { style_image: url('control-1.png') };
  if (pipeline === '/modelswitch/v1') out['with a face'] = { input_face: url('control-0.png') };
  if (pipeline === '/inpaint_anything/v1') {
    for (const operation of has['operation']?.enum ?? []) {
      out[`${operation} at two points`] = { operation, input_coords: [10, 20, 30, 40] };
    }
  }
  if (pipeline === '/train_model/v1') {
    out['one step'] = { max_train_steps: 1 };
    out['the most steps'] = { max_train_steps: 300 };
    out.sdxl = { base_model: 'sdxl' };
    out.flux = { base_model: 'flux' };
    out['one photo'] = { images: [url('init.png')] };
    out['no photo'] = { images: [] };
    out['no validation prompt'] = { validation_prompt: '' };
    out['an empty instance prompt'] = { instance_prompt: '' };
  }
  if (Object.values(MINIMAL_REQUESTS[pipeline] ?? {}).some((v) => String(v).startsWith('https://'))) {
    out['picture sizes unknown'] = {};
  }
  if (pipeline === '/upscaler/v1') {
    out.deblur = { type: 'deblur' };
    out.variation = { type: 'variation' };
    out['variation in tiles'] = { type: 'variation' };
  }
  if (pipeline === '/superresolution/v1') {
    for (const model_name of has['model_name']
      ? ['RealESRGAN_x4plus', 'RealESRGAN_x2plus', 'realesr-general-x4v3']
      : []) {
      // 0.01: below what ImageScaleBy takes after an x4 or x2 model (its smallest scale_by is 0.01).
      for (const scale_factor of [0.01, 0.5, 2, 4])
        out[`${model_name} x${scale_factor}`] = { model_name, scale_factor };
    }
    out['faces restored'] = { face_enhance: true, scale_factor: 4 };
  }
  return out;
}

/** The checkpoint map a variant is compiled with: Flux Dev's cases map `flux-dev`. */
function checkpointsOf(pipeline: string, name: string): Record<string, string> {
  return pipeline === '/generate/v3' && name.startsWith('dev: ')
    ? { 'flux-dev': 'flux1-dev.safetensors' }
    : LCM_LORAS;
}

/** A 3:2 photo for each picture of a request, as the engine knows their sizes (one variant does not). */
function pictureSizes(pipeline: string, name: string, extra: Record<string, unknown>): CompileOptions {
  if (name === 'picture sizes unknown') return {};
  const input = { ...MINIMAL_REQUESTS[pipeline], ...extra };
  const photo = { width: 1200, height: 800 };
  const sizes: Record<string, ImageSize | ImageSize[]> = {};
  for (const field of endpointByPath(pipeline)?.imageFields ?? []) {
    const value = input[field];
    if (typeof value === 'string') sizes[field] = photo;
    else if (Array.isArray(value)) sizes[field] = value.map(() => photo);
  }
  return { imageSizes: sizes };
}

/** Variants whose graphs follow the sizes of their input pictures, with those sizes. */
const INPUT_SIZES: Readonly<Record<string, Readonly<Record<string, CompileOptions>>>> = {
  '/upscaler/v1': { 'variation in tiles': { imageSizes: { input_image: { width: 1200, height: 800 } } } },
};

/** The field a compile refuses (EngineInputError `field: why`), or undefined when it compiles. */
function declaredRefusal(compiler: PipelineCompiler, compile: () => unknown): string | undefined {
  try {
    compile();
    return undefined;
  } catch (error) {
    if (!(error instanceof EngineInputError)) throw error;
    const field = error.message.slice(0, error.message.indexOf(':'));
    if (!compiler.requires.refuses?.some((refusal) => refusal.field === field)) throw error;
    return field;
  }
}

/** The SaveLoRANode of a training graph: an output node whose file is the workflow's `modelFile`. */
function savedModels(workflow: CompiledWorkflow): string[] {
  const ids = Object.keys(workflow.prompt).filter((id) => workflow.prompt[id]?.class_type === 'SaveLoRANode');
  expect(ids.length).toBe(workflow.modelFile ? 1 : 0);
  for (const id of ids) {
    expect(workflow.prompt[id]!.inputs['prefix']).toBe(`${workflow.modelFile!.subfolder}/lora`);
    expect(workflow.modelFile).toMatchObject({ filename: 'lora_00001_.safetensors', type: 'output' });
  }
  return ids;
}

function expectWellFormed(workflow: CompiledWorkflow) {
  const ids = Object.keys(workflow.prompt);
  // Images are saved, a text (image2prompt's caption) is shown, or a model (training) saved.
  expect(workflow.outputNodes.length + savedModels(workflow).length).toBeGreaterThan(0);
  for (const id of workflow.outputNodes)
    expect(['SaveImage', 'PreviewAny']).toContain(workflow.prompt[id]?.class_type);
  if (workflow.runningFrom) expect(workflow.samplingSteps[0]?.node).toBe(workflow.runningFrom);
  for (const { node, steps } of workflow.samplingSteps) {
    const sampler = workflow.prompt[node];
    if (sampler?.class_type === 'TrainLoraNode') {
      expect(sampler.inputs['steps']).toBe(steps);
      expect(sampler.inputs['grad_accumulation_steps']).toBe(1);
    } else if (sampler?.class_type === 'KSamplerAdvanced') {
      const { start_at_step: start, end_at_step: end } = sampler.inputs as Record<string, number>;
      expect(steps).toBe(Math.min(end!, Number(sampler.inputs['steps'])) - start!);
      expect(steps).toBeGreaterThan(0);
    } else {
      expect(sampler?.class_type).toBe('KSampler');
      expect(sampler?.inputs['steps']).toBe(steps);
    }
  }
  expect(workflow.samplingSteps.length).toBe(
    ids.filter((id) =>
      ['KSampler', 'KSamplerAdvanced', 'TrainLoraNode'].includes(String(workflow.prompt[id]?.class_type)),
    ).length,
  );
  if (workflow.checkpoint)
    expect(JSON.stringify(workflow.prompt)).toContain(JSON.stringify(workflow.checkpoint));
}

describe('every compiled graph passes ComfyUI validation against the recorded node definitions', () => {
  it('has a compiler and a minimal request for the same pipelines', () => {
    expect(COMPILERS.map((c) => c.pipeline).sort()).toEqual(Object.keys(MINIMAL_REQUESTS).sort());
  });

  for (const compiler of COMPILERS) {
    describe(compiler.pipeline, () => {
      const used = new Set<string>();
      const cases = Object.entries(variants(compiler.pipeline));
      for (const [name, extra] of cases) {
        it(`compiles ${name} to a graph ComfyUI accepts without node errors`, () => {
          const options = {
            ...pictureSizes(compiler.pipeline, name, extra),
            ...(INPUT_SIZES[compiler.pipeline]?.[name] ?? {}),
            checkpoints: checkpointsOf(compiler.pipeline, name),
          };
          const refused = declaredRefusal(compiler, () => compileRequest(compiler.pipeline, extra, options));
          if (refused) {
            // A variant the contract allows but the engine refuses: a refusal the compiler declares.
            expect(
              compiler.requires.refuses?.map((r) => r.field),
              name,
            ).toContain(refused);
            return;
          }
          const workflow = compileRequest(compiler.pipeline, extra, { ...options, seed: 2 ** 53 - 1 });
          const validation = validatePrompt(equippedServer, { prompt: workflow.prompt });
          expect(validation).toMatchObject({ status: 200, nodeErrors: {} });
          const outputs = validation.status === 200 ? validation.outputs : [];
          expect([...outputs].sort()).toEqual([...workflow.outputNodes, ...savedModels(workflow)].sort());
          expectWellFormed(workflow);
          for (const node of Object.values(workflow.prompt)) {
            expect(compiler.requires.nodes, name).toContain(node.class_type);
            used.add(node.class_type);
          }
        });
      }

      it('declares exactly the node classes its graphs use', () => {
        expect(cases.length).toBeGreaterThan(0);
        expect([...used].sort()).toEqual([...compiler.requires.nodes].sort());
      });
    });
  }
});
