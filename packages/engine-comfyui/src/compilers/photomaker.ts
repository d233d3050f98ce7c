import { EXACT_SIZE_NODES, planSizes, scaleTo } from '../chains/image-size.ts';
import { IMAGE_NODES, loadImageBatch } from '../chains/input-images.ts';
import { applyLoras, LORA_NODES } from '../chains/lora-stack.ts';
import { CHECKPOINT_NODES, checkpointFile, checkpointNeed, loadCheckpoint } from '../chains/model-files.ts';
import {
  applyLcm,
  LCM_NODES,
  modelSettings,
  settingsRefusal,
  settingsRefusals,
} from '../chains/model-settings.ts';
import { PROMPT_NODES } from '../chains/prompt-encoding.ts';
import { requestFields } from '../chains/request-fields.ts';
import { HIRES_DENOISE, samplePasses } from '../chains/sampling-passes.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { MODEL_PROFILES } from '../model-profiles.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, SAVE_NODES, Workflow } from '../workflow/workflow.ts';

/**
 * `/photomaker/v1`: PhotoMaker on SDXL with ComfyUI's own PhotoMaker nodes. As TencentARC's
 * pipeline does, the prompt names the person with the trigger word `img` after a class word ("a
 * photo of a man img"); the ID embedding of `init_images` is merged into that word.
 * `start_merge_step` is honoured as the pipeline does it: steps 0 to `start_merge_step` are
 * sampled from the prompt without the trigger word, the rest from the merged one (two
 * KSamplerAdvanced passes over one schedule, the first handing its leftover noise to the second).
 */
const PIPELINE = '/photomaker/v1';

/** PhotoMaker's weights are SDXL's: the SDXL checkpoint (mappable as `sdxl`) and its profile. */
const MODEL_ID = 'sdxl';
const PROFILE = MODEL_PROFILES.sdxl;

/** TencentARC's PhotoMaker weights (folder `photomaker`). */
export const PHOTOMAKER_MODEL = 'photomaker-v1.bin';

/** The pipeline's trigger word; ComfyUI's PhotoMakerEncode looks for `photomaker` instead. */
const TRIGGER = /(^|\s)img(?=$|\s|([,.;:!?]))/;

/** The prompt for PhotoMakerEncode, which finds its word by splitting on spaces: punctuation kept apart. */
const forPhotoMakerEncode = (prompt: string) =>
  prompt.replace(
    TRIGGER,
    (_, before: string, punctuation?: string) => `${before}photomaker${punctuation ? ' ' : ''}`,
  );

const PHOTOMAKER_NODES: readonly NodeClass[] = ['PhotoMakerLoader', 'PhotoMakerEncode', 'KSamplerAdvanced'];

const NO_TRIGGER =
  "needs the trigger word img after the class word of the person, as in 'a photo of a man img' (PhotoMaker merges the face into that word)";

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    // KSamplerAdvanced samples the first pass; a second one (a size beyond SDXL's) is a KSampler.
    nodes: nodeClasses(
      CHECKPOINT_NODES,
      PROMPT_NODES,
      LORA_NODES,
      LCM_NODES,
      IMAGE_NODES.batch,
      PHOTOMAKER_NODES,
      ['EmptyLatentImage', 'VAEDecode', 'LatentUpscale', 'KSampler'],
      SAVE_NODES,
      EXACT_SIZE_NODES,
    ),
    models: [
      checkpointNeed(MODEL_ID),
      { folder: 'photomaker', what: `\`${PHOTOMAKER_MODEL}\`` },
      {
        folder: 'loras',
        what: 'the files `lora_models` names; with `scheduler: "LCMScheduler"`, the LCM LoRA `COMFYUI_CHECKPOINTS` maps (`sdxl:lcm`)',
      },
    ],
    refuses: [
      { field: 'prompt', why: `without the trigger word: ${NO_TRIGGER}` },
      ...settingsRefusals('steps', 'cfg', 'lcm'),
    ],
  },
  admit: (ctx) => settingsRefusal(PROFILE, requestFields(PIPELINE, ctx), ctx),
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const prompt = fields.string('prompt');
    if (!TRIGGER.test(prompt)) fields.refuse('prompt', NO_TRIGGER);
    const w = new Workflow(ctx.filenamePrefix);
    const settings = modelSettings(w, PROFILE, fields, ctx);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, MODEL_ID));
    const { model, clip } = applyLcm(w, settings, applyLoras(w, fields, checkpoint));
    const encode = (text: string) => w.node('CLIPTextEncode', { text, clip }).out(0);
    const textOnly = encode(prompt.replace(TRIGGER, '').trim());
    const negative = encode(fields.string('negative_prompt'));
    const target = { width: fields.number('width'), height: fields.number('height') };
    const plan = planSizes(PROFILE, target, target);
    const samples = fields.number('samples');
    const steps = settings.steps;
    // The pipeline samples steps i <= start_merge_step from the prompt without the trigger word.
    const split = Math.min(fields.number('start_merge_step') + 1, steps);
    const merged =
      split < steps
        ? w
            .node('PhotoMakerEncode', {
              photomaker: w.node('PhotoMakerLoader', { photomaker_model_name: PHOTOMAKER_MODEL }).out(0),
              image: loadImageBatch(w, fields.images('init_images')),
              clip,
              text: forPhotoMakerEncode(prompt),
            })
            .out(0)
        : undefined;
    const common = {
      model,
      steps,
      cfg: settings.cfg,
      sampler_name: settings.sampler_name,
      scheduler: settings.scheduler,
      negative,
    };
    const firstPass = (latent: Link<'LATENT'>) => {
      const early = w.sampleSteps({
        ...common,
        noise_seed: ctx.seed,
        add_noise: 'enable',
        positive: textOnly,
        latent_image: latent,
        start_at_step: 0,
        end_at_step: split,
        return_with_leftover_noise: merged ? 'enable' : 'disable',
      });
      // A merge step at or past the last step leaves the face out, as in the pipeline.
      return merged
        ? w.sampleSteps({
            ...common,
            noise_seed: ctx.seed,
            add_noise: 'disable',
            positive: merged,
            latent_image: early,
            start_at_step: split,
            end_at_step: steps,
            return_with_leftover_noise: 'disable',
          })
        : early;
    };
    const second = { ...common, seed: ctx.seed, positive: merged ?? textOnly };
    const { image, size } = samplePasses(w, {
      sampler: second,
      secondSampler: second,
      vae: checkpoint.vae,
      latent: w.node('EmptyLatentImage', { ...plan.first, batch_size: samples }).out(0),
      denoise: 1,
      plan,
      secondDenoise: HIRES_DENOISE,
      first: firstPass,
    });
    w.save(scaleTo(w, image, size, target));
    return w.compiled();
  },
};
