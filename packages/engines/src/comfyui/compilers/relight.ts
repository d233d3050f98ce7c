import { EXACT_SIZE_NODES, SD_GRID, samplingSize, scaleTo } from '../chains/image-size.ts';
import { encodeImage, IMAGE_NODES, loadImageAt } from '../chains/input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  checkpointNeed,
  loadCheckpoint,
} from '../chains/model-files.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { RequestFields } from '../chains/request-fields.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/relight/v1`: IC-Light (foreground-conditioned, SD1.5) with kijai's ComfyUI-IC-Light, as the
 * IC-Light demo relights with a light direction: the picture is the foreground the model is
 * conditioned on, a gradient from the `light` side (LightSource) is the starting picture, sampled
 * at the demo's 25 steps and 0.9 denoise with its negative prompt. The picture is relit as sent
 * (the demo cuts the subject out first; send a cut-out subject for the same result).
 */
const PIPELINE = '/relight/v1';

/** The IC-Light foreground-conditioned weights (folder `unet`), as lllyasviel publishes them. */
export const IC_LIGHT_UNET = 'iclight_sd15_fc.safetensors';

/** The contract's light sides as LightSource's positions. */
const LIGHT_POSITIONS: Readonly<Record<string, string>> = {
  left: 'Left Light',
  right: 'Right Light',
  top: 'Top Light',
  bottom: 'Bottom Light',
};

/** The IC-Light demo's settings the request does not carry. */
const DEMO = {
  steps: 25,
  denoise: 0.9,
  addedPrompt: 'best quality',
  negativePrompt: 'lowres, bad anatomy, bad hands, cropped, worst quality',
} as const;

/** SD1.5's latent scale, the multiplier ICLightConditioning is declared with. */
const LATENT_SCALE = 0.18215;

const RELIGHT_NODES: readonly NodeClass[] = ['LoadAndApplyICLightUnet', 'ICLightConditioning', 'LightSource'];

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(
      CHECKPOINT_DIFFUSION_NODES,
      RELIGHT_NODES,
      IMAGE_NODES.sized,
      IMAGE_NODES.encode,
      EXACT_SIZE_NODES,
    ),
    packs: packNeeds('ComfyUI-IC-Light'),
    models: [checkpointNeed('sd1.5'), { folder: 'unet', what: `\`${IC_LIGHT_UNET}\`` }],
  },
  compile(ctx) {
    const fields = new RequestFields(PIPELINE, ctx);
    const target = { width: fields.number('width'), height: fields.number('height') };
    const size = samplingSize(target, SD_GRID);
    const samples = fields.number('samples');
    const w = new Workflow(ctx.filenamePrefix);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, 'sd1.5'));
    const model = w
      .node('LoadAndApplyICLightUnet', { model: checkpoint.model, model_path: IC_LIGHT_UNET })
      .out(0);
    const prompts = encodePrompts(
      w,
      checkpoint.clip,
      [fields.string('prompt'), DEMO.addedPrompt].filter(Boolean).join(', '),
      DEMO.negativePrompt,
    );
    const foreground = w
      .node('VAEEncode', { pixels: loadImageAt(w, fields.image('init_image'), size), vae: checkpoint.vae })
      .out(0);
    const [positive, negative] = w.node('ICLightConditioning', {
      ...prompts,
      vae: checkpoint.vae,
      foreground,
      multiplier: LATENT_SCALE,
    }).outputs;
    const light = w
      .node('LightSource', {
        light_position: LIGHT_POSITIONS[fields.string('light')]!,
        multiplier: 1,
        start_color: '#FFFFFF',
        end_color: '#000000',
        ...size,
      })
      .out(0);
    const latent = w.sample({
      model,
      seed: ctx.seed,
      steps: DEMO.steps,
      cfg: fields.number('guidance_scale'),
      // The demo's DPM-Solver++ SDE with Karras sigmas.
      sampler_name: 'dpmpp_2m_sde',
      scheduler: 'karras',
      positive,
      negative,
      latent_image: encodeImage(w, light, checkpoint.vae, samples),
      denoise: DEMO.denoise,
    });
    const decoded = w.node('VAEDecode', { samples: latent, vae: checkpoint.vae }).out(0);
    w.save(scaleTo(w, decoded, size, target));
    return w.compiled();
  },
};
