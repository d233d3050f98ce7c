import { EngineInputError } from '@imagegen/engines';
import { describe, expect, it } from 'vitest';
import { COMPILERS, compilerFor } from '../src/compilers/index.ts';
import { compileRequest, url } from './compile-request.ts';

/**
 * The refusals a compiler declares (`requires.refuses`, which the docs print) are the words its
 * tasks fail with: a request that trips each one fails naming the field, for the declared reason.
 */

/** Per pipeline, requests that each trip one declared refusal. */
const TRIPS: Readonly<Record<string, readonly Record<string, unknown>[]>> = {
  '/sd/text2image/v1': [
    { ip_adapter: ['0123abcd'], ip_adapter_image: url('init.png') },
    { model_id: 'sdxl', ip_adapter: ['ip-adapter_sd15'], ip_adapter_image: url('init.png') },
    { model_id: 'sd3' },
    { model_id: 'sdxl-lightning', num_inference_steps: 12 },
    { model_id: 'sdxl-lightning', guidance_scale: 5 },
    { scheduler: 'LCMScheduler' },
  ],
  '/facelock/v1': [{ supp_image1: url('control-1.png') }, { model_id: 'sdxl' }],
  '/facelock/v2': [
    { supp_image1: url('control-1.png') },
    { model_id: 'sd1.5' },
    { model_id: 'sdxl-lightning', num_inference_steps: 12, guidance_scale: 1 },
    { model_id: 'sdxl-lightning', num_inference_steps: 8, guidance_scale: 5 },
  ],
  '/instamodel/v1': [{ num_inference_steps: 12 }, { guidance_scale: 3 }],
  '/photomaker/v1': [{ prompt: 'a photo of a man' }, { scheduler: 'LCMScheduler' }],
  '/fashion_upper/v1': [{ guidance_scale: 15 }],
  '/inpaint_anything/v1': [{ input_coords: [] }, { input_coords: [1, 2, 3] }],
  '/superresolution/v1': [{ model_name: '0123abcd' }],
  '/generate/v3': [{ style: 'baroque' }, { num_inference_steps: 8 }],
  '/train_model/v1': [{ base_model: 'flux' }, { images: [] }],
};

function failure(pipeline: string, extra: Record<string, unknown>): { field: string; reason: string } {
  try {
    compileRequest(pipeline, extra);
  } catch (error) {
    expect(error).toBeInstanceOf(EngineInputError);
    const message = (error as Error).message;
    const colon = message.indexOf(': ');
    return { field: message.slice(0, colon), reason: message.slice(colon + 2) };
  }
  throw new Error(`${pipeline} compiled ${JSON.stringify(extra)} without refusing it`);
}

describe('declared refusals', () => {
  for (const [pipeline, trips] of Object.entries(TRIPS)) {
    it(`of ${pipeline} are what its tasks fail with`, () => {
      const declared = compilerFor(pipeline)!.requires.refuses ?? [];
      for (const extra of trips) {
        const { field, reason } = failure(pipeline, extra);
        expect(Object.keys(extra), reason).toContain(field);
        const matching = declared.filter((r) => r.field === field);
        expect(
          matching.some((r) => reason.includes(r.why) || r.why.includes(reason)),
          `${field}: ${reason}`,
        ).toBe(true);
      }
    });
  }

  it('are declared once per field and reason, each with its reason', () => {
    for (const compiler of COMPILERS) {
      const seen = (compiler.requires.refuses ?? []).map((r) => `${r.field}\n${r.why}`);
      expect(new Set(seen).size, compiler.pipeline).toBe(seen.length);
      for (const refusal of compiler.requires.refuses ?? []) expect(refusal.why.length).toBeGreaterThan(10);
    }
  });
});
