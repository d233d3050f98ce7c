import { CASCADE_GRID, EXACT_SIZE_NODES, samplingSize, scaleTo } from '../chains/image-size.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  fixedModelFile,
  fixedModelNeed,
  loadCheckpoint,
} from '../chains/model-files.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { RequestFields } from '../chains/request-fields.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/generate/v3`: Stable Cascade, as ComfyUI's own example runs it. Stage C samples a small
 * semantic latent from the prompt (the request's steps and guidance); stage B, conditioned on it,
 * samples the image latent in a short fixed pass that stage A (its VAE) decodes.
 */
const PIPELINE = '/generate/v3';

export const CASCADE = {
  compression: 42,
  sampler_name: 'euler_ancestral',
  scheduler: 'simple',
  stageB: { steps: 10, cfg: 1.1 },
} as const;

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(
      CHECKPOINT_DIFFUSION_NODES,
      ['StableCascade_EmptyLatentImage', 'StableCascade_StageB_Conditioning', 'ConditioningZeroOut'],
      EXACT_SIZE_NODES,
    ),
    models: [fixedModelNeed('stable-cascade'), fixedModelNeed('stable-cascade-b')],
  },
  compile(ctx) {
    const fields = new RequestFields(PIPELINE, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    const stageC = loadCheckpoint(w, fixedModelFile(ctx, 'stable-cascade'));
    const stageB = loadCheckpoint(w, fixedModelFile(ctx, 'stable-cascade-b'));
    const conditioning = encodePrompts(
      w,
      stageC.clip,
      fields.string('prompt'),
      fields.string('negative_prompt'),
    );
    const target = { width: fields.number('width'), height: fields.number('height') };
    const size = samplingSize(target, CASCADE_GRID);
    const [cLatent, bLatent] = w.node('StableCascade_EmptyLatentImage', {
      ...size,
      compression: CASCADE.compression,
      batch_size: fields.number('samples'),
    }).outputs;
    const common = {
      seed: ctx.seed,
      sampler_name: CASCADE.sampler_name,
      scheduler: CASCADE.scheduler,
      denoise: 1,
    };
    const semantic = w.sample({
      ...common,
      model: stageC.model,
      steps: fields.number('num_inference_steps'),
      cfg: fields.number('guidance_scale'),
      ...conditioning,
      latent_image: cLatent,
    });
    const image = w.sample({
      ...common,
      model: stageB.model,
      ...CASCADE.stageB,
      positive: w
        .node('StableCascade_StageB_Conditioning', { conditioning: conditioning.positive, stage_c: semantic })
        .out(0),
      negative: w.node('ConditioningZeroOut', { conditioning: conditioning.negative }).out(0),
      latent_image: bLatent,
    });
    w.save(scaleTo(w, w.node('VAEDecode', { samples: image, vae: stageB.vae }).out(0), size, target));
    return w.compiled();
  },
};
