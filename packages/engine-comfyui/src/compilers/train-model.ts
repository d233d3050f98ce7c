import type { Size } from '../chains/image-size.ts';
import { IMAGE_NODES, loadSquareBatch } from '../chains/input-images.ts';
import {
  CHECKPOINT_NODES,
  checkpointFile,
  DEFAULT_CHECKPOINTS,
  type LoadedCheckpoint,
  loadCheckpoint,
} from '../chains/model-files.ts';
import { encodePrompts, PROMPT_NODES } from '../chains/prompt-encoding.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import { drawAtSize, TEXT_TO_IMAGE_NODES } from '../chains/text-to-image.ts';
import type { CompileContext, ImageSize, PipelineCompiler } from '../contracts.ts';
import { MODEL_PROFILES, type ModelProfile } from '../model-profiles.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/train_model/v1`: a LoRA trained on the request's photos with ComfyUI's core training nodes
 * (`comfy_extras/nodes_train.py`). The photos are cropped square at the training size, batched and
 * encoded; `instance_prompt` conditions every one; TrainLoraNode runs `max_train_steps` steps on
 * the `base_model` checkpoint; SaveLoRANode writes the LoRA, which the engine fetches and stores
 * as the owner's model. `validation_prompt` is then drawn with the trained LoRA (LoraModelLoader
 * on the base model): its picture is the model's sample image.
 */
const PIPELINE = '/train_model/v1';

/** The base models this graph trains, and their profiles: the square side their checkpoints learnt at, their sampling. */
export const TRAINING_PROFILES: Readonly<Record<string, ModelProfile>> = {
  'sd1.5': MODEL_PROFILES['sd1.5'],
  sdxl: MODEL_PROFILES.sdxl,
};

/** Training sizes are whole UNet blocks: 64 px (8 latent pixels, halved three times). */
const SIDE_STEP = 64;

/**
 * TrainLoraNode's inputs the request does not name: the node's own defaults, one photo per step
 * (so a step is one photo seen once and `max_train_steps` counts optimiser steps).
 */
export const TRAINING_SETTINGS = {
  batch_size: 1,
  grad_accumulation_steps: 1,
  learning_rate: 0.0005,
  rank: 8,
  optimizer: 'AdamW',
  loss_function: 'MSE',
  training_dtype: 'bf16',
  lora_dtype: 'bf16',
  algorithm: 'LoRA',
  gradient_checkpointing: true,
  existing_lora: '[None]',
} as const;

const NOT_SERVED = {
  base_model:
    "this engine trains sd1.5 and sdxl checkpoints; a Flux LoRA would need Flux's own loaders and " +
    'guidance-distilled training, which its training graph does not build',
  images: 'training needs at least one photo',
};

export const TRAINING_NODES: readonly NodeClass[] = ['TrainLoraNode', 'SaveLoRANode', 'LoraModelLoader'];

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(
      CHECKPOINT_NODES,
      IMAGE_NODES.sizedBatch,
      ['VAEEncode'],
      PROMPT_NODES,
      TRAINING_NODES,
      TEXT_TO_IMAGE_NODES,
    ),
    models: [
      {
        folder: 'checkpoints',
        what:
          `the base model trained on: \`${DEFAULT_CHECKPOINTS['sd1.5']}\` (\`sd1.5\`) and ` +
          `\`${DEFAULT_CHECKPOINTS.sdxl}\` (\`sdxl\`), or the files \`COMFYUI_CHECKPOINTS\` maps those ids to`,
      },
      {
        folder: 'loras',
        what:
          'nothing beforehand: the worker stores each trained LoRA there, named by its model id, so ' +
          '`COMFYUI_MODELS_DIR` must name the `models/` folder the servers read (without it, the comfyui ' +
          'engine does not serve training)',
      },
    ],
    refuses: refusals(NOT_SERVED),
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const base = fields.string('base_model');
    const profile = TRAINING_PROFILES[base];
    if (profile === undefined) return fields.refuse('base_model', NOT_SERVED.base_model);
    const photos = fields.images('images');
    if (photos.length === 0) return fields.refuse('images', NOT_SERVED.images);
    const side = trainingSide(profile.pixels.side, sizesOf(ctx, 'images'));
    const square = { width: side, height: side };

    const w = new Workflow(ctx.filenamePrefix);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, base));
    const pixels = loadSquareBatch(w, photos, square);
    const latents = w.node('VAEEncode', { pixels, vae: checkpoint.vae }).out(0);
    const positive = w.node('CLIPTextEncode', {
      text: fields.string('instance_prompt'),
      clip: checkpoint.clip,
    });
    const trainer = w.train({
      model: checkpoint.model,
      latents,
      positive: positive.out(0),
      steps: fields.number('max_train_steps'),
      seed: ctx.seed,
      ...TRAINING_SETTINGS,
    });
    const lora = trainer.out(1);
    w.saveLora(lora, ctx.submission ?? 'inspected');

    const validation = fields.string('validation_prompt');
    if (validation.trim() !== '') drawSample(w, ctx, profile, checkpoint, lora, validation, square);
    return w.compiled();
  },
};

/**
 * The side of the square the photos are trained at: the base model's own, or the smallest photo's
 * shorter side when that is less (a photo is never enlarged: upscaling adds no detail to learn,
 * only time), on whole UNet blocks.
 */
export function trainingSide(nativeSide: number, photos: readonly ImageSize[]): number {
  const smallest = Math.min(nativeSide, ...photos.map((photo) => Math.min(photo.width, photo.height)));
  return Math.max(SIDE_STEP, Math.floor(smallest / SIDE_STEP) * SIDE_STEP);
}

function sizesOf(ctx: CompileContext, field: string): readonly ImageSize[] {
  const sizes = ctx.imageSizes?.[field];
  return sizes === undefined ? [] : 'width' in sizes ? [sizes as ImageSize] : (sizes as readonly ImageSize[]);
}

/**
 * The validation prompt drawn by the base model with the trained LoRA applied, with the model's
 * own sampling, answered at the training size.
 */
function drawSample(
  w: Workflow,
  ctx: CompileContext,
  profile: ModelProfile,
  checkpoint: LoadedCheckpoint,
  lora: Link<'LORA_MODEL'>,
  prompt: string,
  size: Size,
): void {
  const model = w.node('LoraModelLoader', { model: checkpoint.model, lora, strength_model: 1 }).out(0);
  drawAtSize(w, {
    model,
    vae: checkpoint.vae,
    ...encodePrompts(w, checkpoint.clip, prompt, ''),
    profile,
    settings: profile.sampling,
    seed: ctx.seed,
    target: size,
    samples: 1,
  });
}
