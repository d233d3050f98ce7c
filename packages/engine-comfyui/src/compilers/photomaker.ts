import { EXACT_SIZE_NODES } from '../chains/image-size.ts';
import { IMAGE_NODES, loadImageBatch } from '../chains/input-images.ts';
import { applyLoras, LORA_NODES } from '../chains/lora-stack.ts';
import { CHECKPOINT_NODES, checkpointFile, checkpointNeed, loadCheckpoint } from '../chains/model-files.ts';
import { PROMPT_NODES } from '../chains/prompt-encoding.ts';
import { requestFields } from '../chains/request-fields.ts';
import { samplingFor } from '../chains/schedulers.ts';
import { decodeAndSave, emptyLatent } from '../chains/text-to-image.ts';
import type { PipelineCompiler } from '../contracts.ts';
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
    // KSamplerAdvanced samples here, never KSampler.
    nodes: nodeClasses(
      CHECKPOINT_NODES,
      PROMPT_NODES,
      LORA_NODES,
      IMAGE_NODES.batch,
      PHOTOMAKER_NODES,
      ['EmptyLatentImage', 'VAEDecode'],
      SAVE_NODES,
      EXACT_SIZE_NODES,
    ),
    models: [
      checkpointNeed('sdxl'),
      { folder: 'photomaker', what: `\`${PHOTOMAKER_MODEL}\`` },
      { folder: 'loras', what: 'the files `lora_models` names' },
    ],
    refuses: [{ field: 'prompt', why: `without the trigger word: ${NO_TRIGGER}` }],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const prompt = fields.string('prompt');
    if (!TRIGGER.test(prompt)) fields.refuse('prompt', NO_TRIGGER);
    const w = new Workflow(ctx.filenamePrefix);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, 'sdxl'));
    const { model, clip } = applyLoras(w, fields, checkpoint);
    const encode = (text: string) => w.node('CLIPTextEncode', { text, clip }).out(0);
    const textOnly = encode(prompt.replace(TRIGGER, '').trim());
    const negative = encode(fields.string('negative_prompt'));
    const target = { width: fields.number('width'), height: fields.number('height') };
    const { latent, size } = emptyLatent(w, target, fields.number('samples'));
    const steps = fields.number('num_inference_steps');
    // The pipeline samples steps i <= start_merge_step from the prompt without the trigger word.
    const split = Math.min(fields.number('start_merge_step') + 1, steps);
    const common = {
      model,
      noise_seed: ctx.seed,
      steps,
      cfg: fields.number('guidance_scale'),
      ...samplingFor(fields.string('scheduler')),
      negative,
    };
    const early = w.sampleSteps({
      ...common,
      add_noise: 'enable',
      positive: textOnly,
      latent_image: latent,
      start_at_step: 0,
      end_at_step: split,
      return_with_leftover_noise: split < steps ? 'enable' : 'disable',
    });
    // A merge step at or past the last step leaves the face out, as in the pipeline.
    const sampled =
      split < steps
        ? w.sampleSteps({
            ...common,
            add_noise: 'disable',
            positive: w
              .node('PhotoMakerEncode', {
                photomaker: w.node('PhotoMakerLoader', { photomaker_model_name: PHOTOMAKER_MODEL }).out(0),
                image: loadImageBatch(w, fields.images('init_images')),
                clip,
                text: forPhotoMakerEncode(prompt),
              })
              .out(0),
            latent_image: early,
            start_at_step: split,
            end_at_step: steps,
            return_with_leftover_noise: 'disable',
          })
        : early;
    decodeAndSave(w, sampled, checkpoint.vae, size, target);
    return w.compiled();
  },
};
