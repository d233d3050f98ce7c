import type { PipelineCompiler } from '../contracts.ts';
import { MODEL_PROFILES } from '../model-profiles.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';
import { EXACT_SIZE_NODES } from './image-size.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  fixedModelFile,
  fixedModelNeed,
  loadCheckpoint,
  TEXT_ENCODERS,
} from './model-files.ts';
import { modelSettings } from './model-settings.ts';
import { encodePrompts } from './prompt-encoding.ts';
import { type PipelinesReading, RequestFields } from './request-fields.ts';
import { drawAtSize, type SizedDrawingFields } from './text-to-image.ts';

/**
 * Stable Diffusion 3 and 3.5 (one request shape, the path picks the model): the checkpoint's
 * MMDiT and VAE, the three text encoders from TripleCLIPLoader, ModelSamplingSD3's shift, and the
 * sampler of the model's profile (ComfyUI's SD3 and SD3.5 examples: euler, sgm_uniform), near its
 * megapixel with a second pass beyond it. The shift is SD3's own 3, written out so a checkpoint
 * that states another still samples as SD3.
 */
export const SD3_SHIFT = 3;

/** The fields the SD3 graph reads, which `/sd3/v1` and `/sd3_5/v1` share. */
export interface Sd3Request extends SizedDrawingFields {
  readonly prompt: string;
  readonly negative_prompt: string | undefined;
}

export function sd3Compiler(
  pipeline: PipelinesReading<Sd3Request>,
  model: 'sd3' | 'sd3.5',
): PipelineCompiler {
  return {
    pipeline,
    requires: {
      nodes: nodeClasses(
        CHECKPOINT_DIFFUSION_NODES,
        ['TripleCLIPLoader', 'ModelSamplingSD3', 'EmptySD3LatentImage', 'LatentUpscale'],
        EXACT_SIZE_NODES,
      ),
      models: [
        fixedModelNeed(model),
        {
          folder: 'text_encoders',
          what: `\`${TEXT_ENCODERS.clipL}\`, \`${TEXT_ENCODERS.clipG}\` and \`${TEXT_ENCODERS.t5xxl}\``,
        },
      ],
    },
    compile(ctx) {
      const fields = new RequestFields<Sd3Request>(pipeline, ctx);
      const profile = MODEL_PROFILES[model];
      const w = new Workflow(ctx.filenamePrefix);
      const checkpoint = loadCheckpoint(w, fixedModelFile(ctx, model));
      const clip = w
        .node('TripleCLIPLoader', {
          clip_name1: TEXT_ENCODERS.clipL,
          clip_name2: TEXT_ENCODERS.clipG,
          clip_name3: TEXT_ENCODERS.t5xxl,
        })
        .out(0);
      drawAtSize(w, {
        model: w.node('ModelSamplingSD3', { model: checkpoint.model, shift: SD3_SHIFT }).out(0),
        vae: checkpoint.vae,
        ...encodePrompts(w, clip, fields.string('prompt'), fields.string('negative_prompt')),
        profile,
        settings: modelSettings(w, profile, fields, ctx),
        seed: ctx.seed,
        target: { width: fields.number('width'), height: fields.number('height') },
        samples: fields.number('samples'),
        latent: 'EmptySD3LatentImage',
      });
      return w.compiled();
    },
  };
}
