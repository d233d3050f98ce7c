import type { PipelineCompiler } from '../contracts.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';
import { EXACT_SIZE_NODES, SD3_GRID, samplingSize, scaleTo } from './image-size.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  fixedModelFile,
  fixedModelNeed,
  loadCheckpoint,
  TEXT_ENCODERS,
} from './model-files.ts';
import { encodePrompts } from './prompt-encoding.ts';
import { type PipelinesReading, RequestFields } from './request-fields.ts';
import type { SizedDrawingFields } from './text-to-image.ts';

/**
 * Stable Diffusion 3 and 3.5 (one request shape, the path picks the model): the checkpoint's
 * MMDiT and VAE, the three text encoders from TripleCLIPLoader, ModelSamplingSD3's shift, and the
 * sampler ComfyUI's SD3 and SD3.5 examples use (euler, sgm_uniform; sd3/sd3_simple_example.png).
 * The shift is SD3's own 3, written out so a checkpoint that states another still samples as SD3.
 */
export const SD3_SAMPLING = { sampler_name: 'euler', scheduler: 'sgm_uniform', shift: 3 } as const;

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
        ['TripleCLIPLoader', 'ModelSamplingSD3', 'EmptySD3LatentImage'],
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
      const w = new Workflow(ctx.filenamePrefix);
      const checkpoint = loadCheckpoint(w, fixedModelFile(ctx, model));
      const clip = w
        .node('TripleCLIPLoader', {
          clip_name1: TEXT_ENCODERS.clipL,
          clip_name2: TEXT_ENCODERS.clipG,
          clip_name3: TEXT_ENCODERS.t5xxl,
        })
        .out(0);
      const shifted = w
        .node('ModelSamplingSD3', { model: checkpoint.model, shift: SD3_SAMPLING.shift })
        .out(0);
      const target = { width: fields.number('width'), height: fields.number('height') };
      const size = samplingSize(target, SD3_GRID);
      const latent = w.sample({
        model: shifted,
        seed: ctx.seed,
        steps: fields.number('num_inference_steps'),
        cfg: fields.number('guidance_scale'),
        sampler_name: SD3_SAMPLING.sampler_name,
        scheduler: SD3_SAMPLING.scheduler,
        ...encodePrompts(w, clip, fields.string('prompt'), fields.string('negative_prompt')),
        latent_image: w.node('EmptySD3LatentImage', { ...size, batch_size: fields.number('samples') }).out(0),
        denoise: 1,
      });
      const decoded = w.node('VAEDecode', { samples: latent, vae: checkpoint.vae }).out(0);
      w.save(scaleTo(w, decoded, size, target));
      return w.compiled();
    },
  };
}
