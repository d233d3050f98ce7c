import type { Pipeline } from '@imagegen/engines';
import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, SAVE_NODES, Workflow } from '../workflow/workflow.ts';

/**
 * The virtual try-on pipelines: `model_image` dressed in the garment of `cloth_image` with CatVTON
 * (chflame163's ComfyUI_CatVTON_Wrapper). CatVTON is one model for every garment class; the mask
 * says what it repaints. The mask is made from `model_image` by ComfyUI-RMBG's clothes parser with
 * what CatVTON's own masker (`model/cloth_masker.py`, AutoMasker) joins for `upper`, `lower` and
 * `overall`: the clothes that may be replaced and the body under them, so a short sleeve can
 * become a long one and a skirt trousers; then grown by the wrapper's 25 px. Each sample is one
 * CatVTON run with its own seed (seed, seed+1…).
 */

/**
 * Each pipeline's mask as the clothes parser's switches (its labels are the ATR set's). CatVTON's
 * masker joins, for `upper`, the upper clothes, coats, dresses and jumpsuits with the torso and
 * arms (DensePose); for `lower`, trousers, skirts, dresses and jumpsuits with the legs; for
 * `overall` both. The ATR labels have no coat or jumpsuit (a coat is Upper-clothes there), and the
 * arms and legs stand for DensePose's parts.
 */
export const GARMENT_MASKS = {
  '/fashion_upper/v1': { 'Upper-clothes': true, Dress: true, 'Left-arm': true, 'Right-arm': true },
  '/fashion_lower/v1': { Pants: true, Skirt: true, Dress: true, 'Left-leg': true, 'Right-leg': true },
  '/fashion_dress/v1': {
    'Upper-clothes': true,
    Dress: true,
    Pants: true,
    Skirt: true,
    'Left-arm': true,
    'Right-arm': true,
    'Left-leg': true,
    'Right-leg': true,
  },
} as const;

/** CatVTONWrapper's largest cfg. */
const MAX_CFG = 14;

const REFUSED = {
  guidance_scale: `above ${MAX_CFG}: CatVTONWrapper takes a cfg up to ${MAX_CFG}`,
};

const TRY_ON_NODES: readonly NodeClass[] = ['ClothesSegment', 'CatVTONWrapper'];

function tryOnCompiler(pipeline: keyof typeof GARMENT_MASKS & Pipeline): PipelineCompiler {
  return {
    pipeline,
    requires: {
      nodes: nodeClasses(IMAGE_NODES.load, TRY_ON_NODES, SAVE_NODES),
      packs: packNeeds('ComfyUI-RMBG', 'ComfyUI_CatVTON_Wrapper'),
      models: [
        {
          folder: 'CatVTON',
          what: "zhengchong/CatVTON's attention weights and `stable-diffusion-inpainting/` (the wrapper's README lists them); the wrapper runs on CUDA",
        },
        {
          folder: 'RMBG/segformer_clothes',
          what: 'the SegFormer clothes parser (ComfyUI-RMBG fetches it on first use)',
        },
      ],
      refuses: refusals(REFUSED),
    },
    compile(ctx) {
      const fields = requestFields(pipeline, ctx);
      const cfg = fields.number('guidance_scale');
      if (cfg > MAX_CFG) fields.refuse('guidance_scale', REFUSED.guidance_scale);
      const w = new Workflow(ctx.filenamePrefix);
      const person = loadImage(w, fields.image('model_image'));
      const garment = loadImage(w, fields.image('cloth_image'));
      const [, mask] = w.node('ClothesSegment', { images: person, ...GARMENT_MASKS[pipeline] }).outputs;
      for (let sample = 0; sample < fields.number('samples'); sample++) {
        const dressed = w
          .node('CatVTONWrapper', {
            image: person,
            mask,
            refer_image: garment,
            mask_grow: 25,
            mixed_precision: 'fp16',
            // Wrapped so a seed near the top of the range stays an exact JSON number.
            seed: (ctx.seed + sample) % 2 ** 53,
            steps: fields.number('num_inference_steps'),
            cfg,
          })
          .out(0);
        w.save(dressed);
      }
      return w.compiled();
    },
  };
}

export const fashionUpper = tryOnCompiler('/fashion_upper/v1');
export const fashionLower = tryOnCompiler('/fashion_lower/v1');
export const fashionDress = tryOnCompiler('/fashion_dress/v1');
