import { createEngineRegistry, EngineInputError } from '@imagegen/engines';
import { describe, expect, it } from 'vitest';
import { parseCheckpointSettings } from '../src/comfyui-settings.ts';
import { COMPILERS, compilerFor } from '../src/compilers/index.ts';
import { createComfyuiEngine } from '../src/engine-api.ts';
import { compileRequest, MINIMAL_REQUESTS, nodesOf, url, validatedRequest } from './compile-request.ts';
import { standInClient } from './stand-in-client.ts';

/**
 * COMFYUI_CHECKPOINTS' roles and families in the compiled graphs: the inpainting paths and the
 * repaint steps load the inpainting checkpoint the setting maps (the base where it maps none),
 * every other graph keeps the base; an id whose family is known is refused at submission where
 * the pipeline's adapters fit the other family, and otherwise brings its own family's adapters.
 */

const SETTINGS = parseCheckpointSettings(
  [
    'sd1.5=random-sd15.safetensors',
    'sd1.5:inpainting=sd15-inpainting.safetensors',
    'sdxl:inpainting=sd_xl_inpaint_0.1.safetensors',
    'sdxl:lightning=juggernaut-lightning.safetensors',
    'flux:dev=flux1-dev-fp8.safetensors',
    'my-xl:sdxl=juggernautXL.safetensors',
    'my-xl:inpainting=juggernautXL-inpainting.safetensors',
    'my-15=dreamshaper8.safetensors',
  ].join(','),
);

const checkpointsOf = (pipeline: string, extra: Record<string, unknown> = {}, settings = SETTINGS) =>
  nodesOf(compileRequest(pipeline, extra, settings), 'CheckpointLoaderSimple').map(
    (node) => node.inputs['ckpt_name'],
  );

describe('checkpoint roles', () => {
  it('inpainting paths load the inpainting checkpoint of their model', () => {
    expect(checkpointsOf('/sd/inpainting/v1')).toEqual(['sd15-inpainting.safetensors']);
    expect(checkpointsOf('/sdxl/inpainting/v1')).toEqual(['sd_xl_inpaint_0.1.safetensors']);
    expect(checkpointsOf('/sdxl/inpainting/v1', { model_id: 'my-xl' })).toEqual([
      'juggernautXL-inpainting.safetensors',
    ]);
    // An id without an inpainting role inpaints on its own checkpoint, as before roles existed.
    expect(checkpointsOf('/sd/inpainting/v1', { model_id: 'my-15' })).toEqual(['dreamshaper8.safetensors']);
  });

  it('the repaint steps and outpainting load SDXL inpainting', () => {
    for (const pipeline of ['/bgchanger/v1', '/modelswitch/v1', '/inpaint_anything/v1', '/outpainting/v1']) {
      expect(checkpointsOf(pipeline), pipeline).toEqual(['sd_xl_inpaint_0.1.safetensors']);
    }
  });

  it('every other graph keeps the base checkpoint', () => {
    expect(checkpointsOf('/sd/text2image/v1')).toEqual(['random-sd15.safetensors']);
    expect(checkpointsOf('/sdxl/text2image/v1')).toEqual(['sd_xl_base_1.0.safetensors']);
    expect(checkpointsOf('/sd/image2image/v1')).toEqual(['random-sd15.safetensors']);
    expect(checkpointsOf('/sdxl/image2image/v1', { model_id: 'my-xl' })).toEqual([
      'juggernautXL.safetensors',
    ]);
    expect(checkpointsOf('/logo/v1')).toEqual(['sd_xl_base_1.0.safetensors']);
    expect(checkpointsOf('/upscaler/v1', { type: 'variation' })).toEqual(['sd_xl_base_1.0.safetensors']);
  });

  it('without roles mapped, every graph loads the base checkpoints (the defaults)', () => {
    const none = { checkpoints: {}, families: {} };
    expect(checkpointsOf('/sd/inpainting/v1', {}, none)).toEqual(['v1-5-pruned-emaonly.safetensors']);
    expect(checkpointsOf('/sdxl/inpainting/v1', {}, none)).toEqual(['sd_xl_base_1.0.safetensors']);
    for (const pipeline of ['/bgchanger/v1', '/modelswitch/v1', '/inpaint_anything/v1', '/outpainting/v1']) {
      expect(checkpointsOf(pipeline, {}, none), pipeline).toEqual(['sd_xl_base_1.0.safetensors']);
    }
  });

  it('a role key is never a model id a request may name', () => {
    expect(() => compileRequest('/sdxl/text2image/v1', { model_id: 'sdxl:inpainting' }, SETTINGS)).toThrow(
      "model_id: unknown model id 'sdxl:inpainting'",
    );
  });

  it('lightning and flux dev are roles of the same setting', () => {
    expect(checkpointsOf('/instamodel/v1')).toEqual(['juggernaut-lightning.safetensors']);
    const flux = compileRequest('/generate/v3', {}, SETTINGS);
    expect(nodesOf(flux, 'UNETLoader')[0]?.inputs['unet_name']).toBe('flux1-dev-fp8.safetensors');
    expect(nodesOf(flux, 'FluxGuidance')).toHaveLength(1);
  });
});

describe('model families', () => {
  const controlnet = { controlnets: ['canny'], control_image: url('control-0.png') };
  const controlnetsOf = (extra: Record<string, unknown>) =>
    nodesOf(
      compileRequest('/sd/text2image/v1', { ...controlnet, ...extra }, SETTINGS),
      'ControlNetLoader',
    ).map((node) => node.inputs['control_net_name']);

  it('an SDXL model on an SD1.5 path brings the SDXL controlnet, built-in or declared', () => {
    expect(controlnetsOf({ model_id: 'sdxl' })).toEqual(['controlnet-canny-sdxl-1.0.safetensors']);
    expect(controlnetsOf({ model_id: 'my-xl' })).toEqual(['controlnet-canny-sdxl-1.0.safetensors']);
    // An id whose family the setting does not say is taken for the path's family.
    expect(controlnetsOf({ model_id: 'my-15' })).toEqual(['control_v11p_sd15_canny.pth']);
  });

  const admit = (pipeline: string, extra: Record<string, unknown>) =>
    compilerFor(pipeline)!.admit!({
      input: validatedRequest(pipeline, { ...MINIMAL_REQUESTS[pipeline], ...extra }),
      ...SETTINGS,
    });

  it('a model of the family the adapters do not fit is refused at submission, in the compile words', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['/facelock/v1', { model_id: 'sdxl' }, 'model_id'],
      ['/facelock/v1', { model_id: 'my-xl' }, 'model_id'],
      ['/facelock/v2', { model_id: 'sd1.5' }, 'model_id'],
      [
        '/sd/text2image/v1',
        { model_id: 'sdxl', ip_adapter: ['ip-adapter_sd15'], ip_adapter_image: url('init.png') },
        'ip_adapter',
      ],
      [
        '/sd/text2image/v1',
        { model_id: 'my-xl', ip_adapter: ['ip-adapter_sd15'], ip_adapter_image: url('init.png') },
        'ip_adapter',
      ],
    ];
    for (const [pipeline, extra, field] of cases) {
      const refusal = admit(pipeline, extra);
      expect(refusal, `${pipeline} ${JSON.stringify(extra)}`).toMatchObject({
        field,
        type: 'value_error.model_family',
      });
      expect(() => compileRequest(pipeline, extra, SETTINGS)).toThrow(
        new EngineInputError(`${field}: ${refusal!.message}`),
      );
    }
    expect(admit('/facelock/v1', { model_id: 'my-xl' })?.message).toBe(
      "'my-xl' is an SDXL model, and IP-Adapter FaceID Plus V2 and its LoRA fit SD1.5 models only; send an SD1.5 model here, or use /facelock/v2 (PuLID for SDXL)",
    );
  });

  it('admits the right family, the other family where it brings its own adapters, and unknown ids', () => {
    expect(admit('/facelock/v1', { model_id: 'sd1.5' })).toBeNull();
    expect(admit('/facelock/v2', { model_id: 'my-xl' })).toBeNull();
    expect(admit('/sd/text2image/v1', { model_id: 'sdxl', ...controlnet })).toBeNull();
    // Families known only when the file is (an undeclared mapping, an owner's model) are left to the compile.
    expect(admit('/facelock/v1', { model_id: 'my-xl-undeclared' })).toBeNull();
    expect(admit('/facelock/v2', { model_id: '0123456789abcdef0123456789abcdef' })).toBeNull();
  });

  it("is the engine's admit, asked through the registry for the pipeline's serving engine", () => {
    const engine = createComfyuiEngine({
      servers: [standInClient('gpu-1')],
      compilers: COMPILERS,
      ...SETTINGS,
    });
    const registry = createEngineRegistry([engine], { enabled: ['comfyui'], pinned: {} });
    const input = validatedRequest('/facelock/v1', {
      ...MINIMAL_REQUESTS['/facelock/v1'],
      model_id: 'my-xl',
    });
    expect(registry.admit('/facelock/v1', input)?.field).toBe('model_id');
    expect(registry.admit('/facelock/v1', { ...input, model_id: 'sd1.5' })).toBeNull();
    // A pipeline it does not serve is not its to refuse.
    expect(registry.admit('/bgremover/v1', input)).toBeNull();
  });
});
