import { describe, expect, it } from 'vitest';
import { parseCheckpointSettings } from '../src/comfyui-settings.ts';
import { compilerFor } from '../src/compilers/index.ts';
import type { CompiledWorkflow } from '../src/contracts.ts';
import { MODEL_PROFILES } from '../src/model-profiles.ts';
import {
  type CompileOptions,
  compileRequest,
  LCM_LORAS,
  MINIMAL_REQUESTS,
  nodesOf,
  url,
  validatedRequest,
} from './compile-request.ts';

/**
 * The model decides the settings, not the path: each class of defect issue 40 names, on the graph
 * of a request that showed it (the request-space test holds the same over the whole space).
 */

type Link = [string, number];
const source = (workflow: CompiledWorkflow, link: unknown) => workflow.prompt[(link as Link)[0]]!;

/** Each KSampler's latent size, steps, cfg, sampler, schedule and denoise, in order. */
function passes(workflow: CompiledWorkflow) {
  return nodesOf(workflow, 'KSampler').map(({ inputs }) => {
    let latent = source(workflow, inputs['latent_image']);
    while (!('width' in latent.inputs))
      latent = source(workflow, latent.inputs['samples'] ?? latent.inputs['pixels']);
    return {
      size: `${latent.inputs['width']}x${latent.inputs['height']}`,
      steps: inputs['steps'],
      cfg: inputs['cfg'],
      sampler: `${inputs['sampler_name']}/${inputs['scheduler']}`,
      denoise: inputs['denoise'],
    };
  });
}

/** The size of the saved pictures: the last ImageScale before SaveImage, or none. */
function answered(workflow: CompiledWorkflow): string {
  const [save] = nodesOf(workflow, 'SaveImage');
  const last = source(workflow, save!.inputs['images']);
  return last.class_type === 'ImageScale' ? `${last.inputs['width']}x${last.inputs['height']}` : 'as sampled';
}

const admit = (pipeline: string, extra: Record<string, unknown>, options: CompileOptions = {}) =>
  compilerFor(pipeline)!.admit!({
    input: validatedRequest(pipeline, { ...MINIMAL_REQUESTS[pipeline], ...extra }),
    checkpoints: options.checkpoints ?? {},
    families: options.families ?? {},
  });

describe('the profiles', () => {
  it("hold what each model's authors use", () => {
    const summary = Object.fromEntries(
      Object.values(MODEL_PROFILES).map((p) => [
        p.id,
        [
          p.pixels.side,
          p.sampling.steps,
          p.sampling.cfg,
          `${p.sampling.sampler_name}/${p.sampling.scheduler}`,
        ],
      ]),
    );
    expect(summary).toEqual({
      'sd1.5': [512, 20, 8, 'euler/normal'],
      'sd1.5-inpainting': [512, 20, 8, 'uni_pc_bh2/normal'],
      sdxl: [1024, 25, 5, 'euler/normal'],
      'sdxl-inpainting': [1024, 20, 8, 'uni_pc_bh2/normal'],
      'sdxl-lightning': [1024, 8, 1, 'euler/sgm_uniform'],
      // SDXL-Turbo was distilled at 512 px: 1 step, euler_ancestral, no guidance.
      'sdxl-turbo': [512, 1, 1, 'euler_ancestral/sgm_uniform'],
      sd3: [1024, 30, 5.45, 'euler/sgm_uniform'],
      'sd3.5': [1024, 20, 5.45, 'euler/sgm_uniform'],
      'flux-dev': [1024, 20, 1, 'euler/simple'],
      'flux-schnell': [1024, 4, 1, 'euler/simple'],
    });
    expect(MODEL_PROFILES['flux-dev'].distilledGuidance).toBe(3.5);
    expect(MODEL_PROFILES['flux-schnell'].distilled).toEqual({ maxSteps: 4, maxCfg: 1 });
    expect(MODEL_PROFILES['sdxl-lightning'].distilled).toEqual({ maxSteps: 8, maxCfg: 2 });
    for (const profile of Object.values(MODEL_PROFILES)) {
      expect(profile.latentChannels, profile.id).toBe(
        profile.architecture.startsWith('sd') && profile.architecture !== 'sd3' ? 4 : 16,
      );
      expect(profile.source.length, profile.id).toBeGreaterThan(20);
    }
  });
});

describe('size follows the model', () => {
  it('samples SDXL near its megapixel on an /sd/ path, and SD1.5 near its 512 px on an SDXL path', () => {
    const xl = compileRequest('/sd/text2image/v1', { model_id: 'sdxl', width: 512, height: 512 });
    expect(passes(xl).map((p) => p.size)).toEqual(['1024x1024']);
    expect(answered(xl)).toBe('512x512');
    const sd = compileRequest('/sdxl/text2image/v1', { model_id: 'sd1.5' });
    expect(passes(sd).map((p) => p.size)).toEqual(['512x512', '1024x1024']);
    expect(answered(sd)).toBe('as sampled');
    const v2 = compileRequest('/generate/v2', { model_id: 'sd1.5', width: 1024, height: 768 });
    expect(passes(v2).map((p) => [p.size, p.denoise])).toEqual([
      ['592x440', 1],
      ['1024x768', 0.5],
    ]);
  });

  it('draws a large size at the native budget first, then a second pass, instead of one pass that repeats subjects', () => {
    const large = compileRequest('/sd/text2image/v1', { width: 1536, height: 1024 });
    // The second pass within SD1.5's reach (4 times its area), then scaled to the size asked.
    expect(passes(large).map((p) => [p.size, p.denoise])).toEqual([
      ['624x416', 1],
      ['1256x840', 0.5],
    ]);
    expect(answered(large)).toBe('1536x1024');
    expect(nodesOf(large, 'LatentUpscale')).toHaveLength(1);
  });

  it('samples InstantID at 1016 px where it would be 1024 x 1024 (its README: no watermarks)', () => {
    const workflow = compileRequest('/instamodel/v1', { width: 1024, height: 1024 });
    expect(passes(workflow).map((p) => p.size)).toEqual(['1016x1016']);
    expect(answered(workflow)).toBe('1024x1024');
  });
});

describe('role ids as model ids', () => {
  it('draw the Lightning checkpoint with its own steps, cfg and schedule, and refuse past them at submission', () => {
    const workflow = compileRequest('/sdxl/text2image/v1', { model_id: 'sdxl-lightning' });
    expect(passes(workflow)).toEqual([
      { size: '1024x1024', steps: 8, cfg: 1, sampler: 'euler/sgm_uniform', denoise: 1 },
    ]);
    // The request's sampler, Lightning's schedule.
    const ancestral = compileRequest('/sdxl/text2image/v1', {
      model_id: 'sdxl-lightning',
      scheduler: 'EulerAncestralDiscreteScheduler',
    });
    expect(passes(ancestral)[0]?.sampler).toBe('euler_ancestral/sgm_uniform');
    expect(admit('/sdxl/text2image/v1', { model_id: 'sdxl-lightning', num_inference_steps: 12 })).toEqual({
      field: 'num_inference_steps',
      message:
        'more steps than the loaded model is distilled for: SDXL-Lightning samples at most 8 (8 at the default), not 12',
      type: 'value_error.model_settings',
    });
    expect(admit('/sdxl/text2image/v1', { model_id: 'sdxl-lightning', guidance_scale: 4 })?.field).toBe(
      'guidance_scale',
    );
  });

  it('refuse at submission a model no SD graph draws, mapped or built in', () => {
    const settings = parseCheckpointSettings('sd3=random-sd3.safetensors,my-3:sd3=x.safetensors');
    for (const model_id of ['sd3', 'my-3', 'flux-dev']) {
      expect(admit('/sd/text2image/v1', { model_id }, settings), model_id).toMatchObject({
        field: 'model_id',
        type: 'value_error.model_family',
      });
    }
    expect(admit('/sd/text2image/v1', { model_id: 'sd3' }, settings)?.message).toBe(
      "'sd3' is not a model these paths draw: they draw SD1.5 and SDXL checkpoints (Lightning and Turbo included); it is an SD3 model: use /sd3/v1 or /sd3_5/v1",
    );
  });

  it('a declared Turbo draws at its 512 px and 1 step', () => {
    const turbo = compileRequest(
      '/sdxl/text2image/v1',
      { model_id: 'my-turbo' },
      {
        ...parseCheckpointSettings('my-turbo:sdxl-turbo=turbo.safetensors'),
      },
    );
    // 1024 px is past its range: a second pass enlarges it, at its own step.
    expect(passes(turbo)).toEqual([
      { size: '512x512', steps: 1, cfg: 1, sampler: 'euler_ancestral/sgm_uniform', denoise: 1 },
      { size: '1024x1024', steps: 1, cfg: 1, sampler: 'euler_ancestral/sgm_uniform', denoise: 0.5 },
    ]);
  });
});

describe('hires below the latent upscale', () => {
  const landscape = { imageSizes: { init_image: { width: 1200, height: 800 } } };

  it('enlarges in pixel space with ESRGAN at a low strength, in latent space at 0.5 and more', () => {
    const low = compileRequest('/sd/image2image/v1', { hires: true, strength: 0.3 }, landscape);
    expect(passes(low).map((p) => p.denoise)).toEqual([0.3, 0.3]);
    expect(nodesOf(low, 'LatentUpscale')).toEqual([]);
    expect(nodesOf(low, 'UpscaleModelLoader')[0]?.inputs['model_name']).toBe('RealESRGAN_x4plus.pth');
    const [second] = nodesOf(low, 'KSampler').slice(1);
    expect(source(low, second!.inputs['latent_image']).class_type).toBe('VAEEncode');
    const high = compileRequest('/sd/image2image/v1', { hires: true, strength: 0.8 }, landscape);
    expect(passes(high).map((p) => p.denoise)).toEqual([0.8, 0.5]);
    expect(nodesOf(high, 'LatentUpscale')).toHaveLength(1);
    expect(nodesOf(high, 'UpscaleModelLoader')).toEqual([]);
  });
});

describe('outpainting', () => {
  it('samples the new border fully at any strength, strength setting how far it blends into the photo', () => {
    const half = compileRequest('/outpainting/v1', { strength: 0.5 });
    expect(nodesOf(half, 'KSampler').map((node) => node.inputs['denoise'])).toEqual([1]);
    expect(nodesOf(half, 'ImagePadForOutpaint')[0]?.inputs['feathering']).toBe(20);
    expect(nodesOf(compileRequest('/outpainting/v1'), 'ImagePadForOutpaint')[0]?.inputs['feathering']).toBe(
      40,
    );
  });
});

describe('Flux', () => {
  const dev = { checkpoints: { 'flux-dev': 'flux1-dev.safetensors' } };

  it("gives Dev its own 3.5 for the API's default and for 3.5 sent", () => {
    for (const extra of [{}, { guidance_scale: 3.5 }]) {
      expect(nodesOf(compileRequest('/generate/v3', extra, dev), 'FluxGuidance')[0]?.inputs['guidance']).toBe(
        3.5,
      );
    }
  });

  it("bounds Schnell's steps: its 4 at the default, fewer as sent, more refused at submission", () => {
    expect(passes(compileRequest('/generate/v3')).map((p) => p.steps)).toEqual([4]);
    expect(passes(compileRequest('/generate/v3', { num_inference_steps: 2 })).map((p) => p.steps)).toEqual([
      2,
    ]);
    expect(admit('/generate/v3', { num_inference_steps: 20 })).toMatchObject({
      field: 'num_inference_steps',
      type: 'value_error.model_settings',
    });
    expect(admit('/generate/v3', { num_inference_steps: 20 }, dev)).toBeNull();
  });

  it('zeroes the negative at cfg 1 instead of encoding an empty prompt through T5', () => {
    const workflow = compileRequest('/generate/v3');
    const [sampler] = nodesOf(workflow, 'KSampler');
    expect(source(workflow, sampler!.inputs['negative']).class_type).toBe('ConditioningZeroOut');
    expect(nodesOf(workflow, 'CLIPTextEncode')).toHaveLength(1);
  });

  it('keeps a 3:2 photo whole from image to image and inpainting, the painting laid over it', () => {
    const sizes = {
      imageSizes: { init_image: { width: 1200, height: 800 }, mask_image: { width: 1200, height: 800 } },
    };
    const picture = compileRequest('/generate/v3', { init_image: url('init.png'), strength: 0.6 }, sizes);
    for (const scale of nodesOf(picture, 'ImageScale')) expect(scale.inputs['crop']).toBe('disabled');
    expect(answered(picture)).toBe('1254x836');
    const inpainted = compileRequest(
      '/generate/v3',
      { init_image: url('init.png'), mask_image: url('mask.png'), strength: 0.6 },
      sizes,
    );
    const [save] = nodesOf(inpainted, 'SaveImage');
    expect(source(inpainted, save!.inputs['images']).class_type).toBe('ImageCompositeMasked');
  });
});

describe('LCMScheduler', () => {
  it("samples with the family's LCM LoRA, ModelSamplingDiscrete lcm and LCM's steps and cfg", () => {
    const workflow = compileRequest(
      '/sdxl/text2image/v1',
      { scheduler: 'LCMScheduler' },
      { checkpoints: LCM_LORAS },
    );
    expect(nodesOf(workflow, 'LoraLoader')[0]?.inputs['lora_name']).toBe(LCM_LORAS['sdxl:lcm']);
    expect(nodesOf(workflow, 'ModelSamplingDiscrete')[0]?.inputs).toMatchObject({ sampling: 'lcm' });
    expect(passes(workflow)).toEqual([
      { size: '1024x1024', steps: 5, cfg: 1.8, sampler: 'lcm/sgm_uniform', denoise: 1 },
    ]);
    // An SDXL model on an /sd/ path takes SDXL's LCM LoRA.
    const onSd = compileRequest(
      '/sd/text2image/v1',
      { scheduler: 'LCMScheduler', model_id: 'sdxl' },
      {
        checkpoints: LCM_LORAS,
      },
    );
    expect(nodesOf(onSd, 'LoraLoader')[0]?.inputs['lora_name']).toBe(LCM_LORAS['sdxl:lcm']);
  });

  it('is refused at submission where no LCM LoRA is mapped', () => {
    expect(admit('/sd/text2image/v1', { scheduler: 'LCMScheduler' })).toEqual({
      field: 'scheduler',
      message:
        'LCMScheduler samples with the LCM LoRA of the model family, which COMFYUI_CHECKPOINTS does not map (map sd1.5:lcm=<LoRA file> for SD1.5, or send another scheduler)',
      type: 'value_error.model_settings',
    });
  });
});

describe('no wasted steps', () => {
  it("draws the logo and repaints with the model's own steps, near its megapixel", () => {
    const logo = compileRequest('/logo/v1', { width: 512, height: 512 });
    expect(passes(logo)).toEqual([
      { size: '1024x1024', steps: 25, cfg: 5, sampler: 'euler/normal', denoise: 1 },
    ]);
    const picture = { imageSizes: { init_image: { width: 3000, height: 2000 } } };
    const repaint = compileRequest('/bgchanger/v1', {}, picture);
    expect(passes(repaint)).toEqual([
      { size: '1256x840', steps: 25, cfg: 5, sampler: 'euler/normal', denoise: 1 },
    ]);
    const inpaintingModel = compileRequest(
      '/bgchanger/v1',
      {},
      {
        ...picture,
        checkpoints: { 'sdxl:inpainting': 'sd_xl_inpaint_0.1.safetensors' },
      },
    );
    expect(passes(inpaintingModel)[0]).toMatchObject({ steps: 20, cfg: 8, sampler: 'uni_pc_bh2/normal' });
  });
});
