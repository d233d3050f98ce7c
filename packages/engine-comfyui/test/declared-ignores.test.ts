import { describe, expect, it } from 'vitest';
import { COMPILERS, compilerFor } from '../src/compilers/index.ts';
import { compileRequest, url } from './compile-request.ts';

/**
 * The fields a compiler declares it takes no notice of in some case (`requires.ignores`, which the
 * docs print) are what its tasks note, in the same words: a request that hits each case compiles,
 * draws, and its graph's notes name the field for the declared reason. Each is a case the original
 * service's own pipeline took no notice of too, so no such task fails.
 */

/** The pictures' sizes, where a note depends on them (outpainting's canvas). */
const SIZES = { imageSizes: { init_image: { width: 640, height: 480 } } };

/** Per pipeline, requests that each hit one declared case. */
const CASES: Readonly<Record<string, readonly Record<string, unknown>[]>> = {
  '/sd/text2image/v1': [
    { strength: 0.5 },
    { control_image: url('control-0.png') },
    { controlnets: ['canny'], control_image: url('control-0.png'), resolution: 256 },
    { ip_adapter_image: url('init.png'), ip_adapter_scale: [0.5] },
    { attn: false, adain: true, samples: 2 },
    { attn: true },
    { adain: true },
    { style: 0.4 },
  ],
  '/sd/controlnet/v1': [{ strength: 0.5 }, { controlnets: [], init_images: [url('control-0.png')] }],
  '/sdxl/text2image/v1': [{ strength: 0.3 }, { ip_adapter_mask_images: [url('mask.png')] }],
  '/facelock/v1': [{ id_mix: true }],
  '/facelock/v2': [{ id_mix: true }],
  '/generate/v2': [{ strength: 0.5 }],
  '/generate/v3': [
    { guidance_scale: 3.5 },
    { strength: 0.5 },
    { mask_image: url('mask.png') },
    { guidance_scale: 2, strength: 0.3, mask_image: url('mask.png') },
  ],
  '/outpainting/v1': [
    { stretch_area: -1 },
    { stretch_area: 0.3, stretch_scale: 1 },
    { horizontal_tile: 0 },
    { vertical_tile: 24 },
    { horizontal_tile: 3, expansion: [256] },
  ],
};

describe('declared ignores', () => {
  for (const [pipeline, requests] of Object.entries(CASES)) {
    it(`of ${pipeline} are what its tasks note, and the tasks run`, () => {
      const declared = compilerFor(pipeline)!.requires.ignores ?? [];
      for (const extra of requests) {
        const { notes = [], prompt } = compileRequest(pipeline, extra, SIZES);
        expect(Object.keys(prompt).length, JSON.stringify(extra)).toBeGreaterThan(0);
        expect(notes.length, JSON.stringify(extra)).toBeGreaterThan(0);
        for (const note of notes) {
          const field = note.slice(0, note.indexOf(': '));
          expect(Object.keys(extra), note).toContain(field);
          expect(
            declared.some((ignored) => ignored.field === field && note.includes(ignored.why)),
            note,
          ).toBe(true);
        }
      }
    });
  }

  it('note nothing where the request leaves those fields alone or uses them', () => {
    expect(compileRequest('/sd/text2image/v1').notes).toBeUndefined();
    expect(compileRequest('/sd/image2image/v1', { strength: 0.5 }).notes).toBeUndefined();
    expect(compileRequest('/sd/text2image/v1', { attn: true, samples: 2 }).notes).toBeUndefined();
    expect(
      compileRequest('/generate/v3', { init_image: url('init.png'), strength: 0.5 }).notes,
    ).toBeUndefined();
    expect(
      compileRequest('/outpainting/v1', { stretch_area: 0.3, horizontal_tile: 1, overlap: 0.02 }, SIZES)
        .notes,
    ).toBeUndefined();
  });

  it('are declared once per field and reason, each with its reason', () => {
    for (const compiler of COMPILERS) {
      const seen = (compiler.requires.ignores ?? []).map((r) => `${r.field}\n${r.why}`);
      expect(new Set(seen).size, compiler.pipeline).toBe(seen.length);
      for (const ignored of compiler.requires.ignores ?? []) expect(ignored.why.length).toBeGreaterThan(10);
    }
  });
});
