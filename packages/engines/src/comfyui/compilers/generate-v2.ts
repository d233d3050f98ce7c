import { EXACT_SIZE_NODES, SD3_GRID, samplingSize, scaleTo } from '../chains/image-size.ts';
import { INPAINT_NODES, inpaint } from '../chains/inpainting.ts';
import { encodeImage, IMAGE_NODES, loadImageAt, loadMaskAt } from '../chains/input-images.ts';
import { applyModelLoras, MODEL_LORA_NODES } from '../chains/lora-stack.ts';
import { FLUX_VAE, fixedModelFile, fixedModelNeed, TEXT_ENCODERS } from '../chains/model-files.ts';
import { PROMPT_NODES } from '../chains/prompt-encoding.ts';
import { RequestFields, refusals } from '../chains/request-fields.ts';
import type { PipelineCompiler } from '../contracts.ts';
import type { Link } from '../workflow/graph.ts';
import { nodeClasses, SAMPLE_NODES, SAVE_NODES, Workflow } from '../workflow/workflow.ts';

/**
 * `/generate/v2`: Flux (dev). The bare diffusion model, its two text encoders and VAE; the
 * request's guidance goes to FluxGuidance, which Flux reads instead of classifier-free guidance,
 * so the sampler runs at cfg 1. `init_image` makes it image to image, `mask_image` inpainting.
 */
const PIPELINE = '/generate/v2';

export const FLUX_SAMPLING = { sampler_name: 'euler', scheduler: 'simple', cfg: 1 } as const;

const NOT_SERVED = {
  style: 'style presets are not served by this engine; send style: null (or leave it out)',
  enhance_prompt: 'prompt rewriting needs a language model, which this engine does not have',
  palette: 'colour palettes are not served by this engine',
};

const WITHOUT_INIT_IMAGE = {
  strength: 'applies only with init_image (image to image)',
  mask_image: 'inpaints init_image, which is not sent',
};

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(
      ['UNETLoader'],
      MODEL_LORA_NODES,
      ['DualCLIPLoader', 'VAELoader'],
      PROMPT_NODES,
      ['FluxGuidance', 'EmptySD3LatentImage'],
      IMAGE_NODES.sized,
      IMAGE_NODES.encode,
      IMAGE_NODES.mask,
      INPAINT_NODES,
      SAMPLE_NODES,
      EXACT_SIZE_NODES,
      SAVE_NODES,
    ),
    models: [
      fixedModelNeed('flux'),
      { folder: 'text_encoders', what: `\`${TEXT_ENCODERS.clipL}\` and \`${TEXT_ENCODERS.t5xxl}\`` },
      { folder: 'vae', what: `\`${FLUX_VAE}\`` },
      {
        folder: 'loras',
        what: 'each Flux LoRA `lora_models` names (`.safetensors` added to a name without extension)',
      },
    ],
    refuses: [...refusals(NOT_SERVED), ...refusals(WITHOUT_INIT_IMAGE)],
  },
  compile(ctx) {
    const fields = new RequestFields(PIPELINE, ctx);
    fields.refuseUnlessDefault(NOT_SERVED);
    const fromPicture = fields.has('init_image');
    if (!fromPicture) {
      fields.refuseUnlessDefault(WITHOUT_INIT_IMAGE);
    }

    const w = new Workflow(ctx.filenamePrefix);
    const unet = fixedModelFile(ctx, 'flux');
    w.usesModel(unet);
    const model = applyModelLoras(
      w,
      fields,
      w.node('UNETLoader', { unet_name: unet, weight_dtype: 'default' }).out(0),
      'flux',
    );
    const clip = w
      .node('DualCLIPLoader', {
        clip_name1: TEXT_ENCODERS.t5xxl,
        clip_name2: TEXT_ENCODERS.clipL,
        type: 'flux',
      })
      .out(0);
    const vae = w.node('VAELoader', { vae_name: FLUX_VAE }).out(0);
    const encoded = w.node('CLIPTextEncode', { text: fields.string('prompt'), clip }).out(0);
    let conditioning = {
      positive: w
        .node('FluxGuidance', { conditioning: encoded, guidance: fields.number('guidance_scale') })
        .out(0),
      // At cfg 1 the sampler never reads the negative; KSampler still wants one.
      negative: w.node('CLIPTextEncode', { text: '', clip }).out(0),
    };

    const target = { width: fields.number('width'), height: fields.number('height') };
    const size = samplingSize(target, SD3_GRID);
    const samples = fields.number('samples');
    let latent: Link<'LATENT'>;
    if (fields.has('mask_image')) {
      const pixels = loadImageAt(w, fields.image('init_image'), size);
      const mask = loadMaskAt(w, fields.image('mask_image'), size);
      ({ latent, ...conditioning } = inpaint(w, conditioning, vae, pixels, mask, samples));
    } else if (fromPicture) {
      latent = encodeImage(w, loadImageAt(w, fields.image('init_image'), size), vae, samples);
    } else {
      latent = w.node('EmptySD3LatentImage', { ...size, batch_size: samples }).out(0);
    }
    const sampled = w.sample({
      model,
      seed: ctx.seed,
      steps: fields.number('num_inference_steps'),
      ...FLUX_SAMPLING,
      ...conditioning,
      latent_image: latent,
      denoise: fromPicture ? fields.number('strength') : 1,
    });
    w.save(scaleTo(w, w.node('VAEDecode', { samples: sampled, vae }).out(0), size, target));
    return w.compiled();
  },
};
