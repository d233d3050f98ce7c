import { validatePrompt } from '@imagegen/comfyui-fake';
import { describe, expect, it } from 'vitest';
import { TRAINING_PROFILES, TRAINING_SETTINGS, trainingSide } from '../src/compilers/train-model.ts';
import type { CompiledWorkflow } from '../src/contracts.ts';
import { MODEL_PROFILES } from '../src/model-profiles.ts';
import { type CompileOptions, compileRequest, equippedServer, nodesOf } from './compile-request.ts';

/**
 * The graph of `/train_model/v1`: what each field of the request becomes on ComfyUI's core
 * training nodes, and what the engine reads beside the graph (the LoRA's file name, progress).
 */

const TRAIN = '/train_model/v1';
const sized = (...sizes: [number, number][]) => ({
  imageSizes: { images: sizes.map(([width, height]) => ({ width, height })) },
});

function train(extra: Record<string, unknown> = {}, options: CompileOptions = {}): CompiledWorkflow {
  const workflow = compileRequest(TRAIN, extra, options);
  expect(validatePrompt(equippedServer, { prompt: workflow.prompt })).toMatchObject({
    status: 200,
    nodeErrors: {},
  });
  return workflow;
}

/** The node a link `[id, slot]` comes from. */
function from(workflow: CompiledWorkflow, link: unknown) {
  const [id, slot] = link as [string, number];
  return { id, slot, ...workflow.prompt[id]! };
}

const trainerOf = (workflow: CompiledWorkflow) => nodesOf(workflow, 'TrainLoraNode')[0]!;

/** How the validation prompt is drawn: the base model's own sampling (SD1.5's, the default). */
const VALIDATION_DRAWING = MODEL_PROFILES['sd1.5'].sampling;

describe('the training graph', () => {
  it("trains max_train_steps steps on the base model's checkpoint with the task's seed, every photo captioned by instance_prompt", () => {
    const workflow = train({ max_train_steps: 37, instance_prompt: 'a photo of sks dog' }, { seed: 99 });
    const trainer = trainerOf(workflow);
    expect(trainer.inputs).toMatchObject({ steps: 37, seed: 99, ...TRAINING_SETTINGS });
    const model = from(workflow, trainer.inputs.model);
    expect([model.class_type, model.inputs.ckpt_name, model.slot]).toEqual([
      'CheckpointLoaderSimple',
      'v1-5-pruned-emaonly.safetensors',
      0,
    ]);
    const positive = from(workflow, trainer.inputs.positive);
    expect([positive.class_type, positive.inputs.text]).toEqual(['CLIPTextEncode', 'a photo of sks dog']);
    expect(from(workflow, positive.inputs.clip).id).toBe(model.id);
    expect(workflow.checkpoint).toBe('v1-5-pruned-emaonly.safetensors');
  });

  it('loads the checkpoint COMFYUI_CHECKPOINTS maps the base model to', () => {
    const workflow = train({ base_model: 'sdxl' }, { checkpoints: { sdxl: 'sd_xl_base_1.0.safetensors' } });
    expect(nodesOf(workflow, 'CheckpointLoaderSimple').map((node) => node.inputs.ckpt_name)).toEqual([
      'sd_xl_base_1.0.safetensors',
    ]);
    const mapped = compileRequest(TRAIN, {}, { checkpoints: { 'sd1.5': 'mine.safetensors' } });
    expect(nodesOf(mapped, 'CheckpointLoaderSimple')[0]!.inputs.ckpt_name).toBe('mine.safetensors');
  });

  it("crops every photo square at the training size, batches them in request order and encodes them with the checkpoint's VAE", () => {
    const workflow = train({}, sized([800, 600], [600, 900], [1024, 1024]));
    const latents = from(workflow, trainerOf(workflow).inputs.latents);
    expect(latents.class_type).toBe('VAEEncode');
    expect(from(workflow, latents.inputs.vae)).toMatchObject({
      class_type: 'CheckpointLoaderSimple',
      slot: 2,
    });
    // ImageBatch(ImageBatch(photo 1, photo 2), photo 3)
    const photos: string[] = [];
    const walk = (link: unknown): void => {
      const node = from(workflow, link);
      if (node.class_type === 'ImageBatch') {
        walk(node.inputs.image1);
        walk(node.inputs.image2);
        return;
      }
      expect(node.class_type).toBe('ImageScale');
      expect(node.inputs).toMatchObject({ width: 512, height: 512, crop: 'center' });
      photos.push(String(from(workflow, node.inputs.image).inputs.image));
    };
    walk(latents.inputs.pixels);
    expect(photos).toEqual(['control-0.png', 'control-1.png', 'init.png']);
  });

  it("never enlarges a photo: trains at the smallest shorter side on whole 64 px blocks, at most the base model's own size", () => {
    expect(TRAINING_PROFILES['sd1.5']!.pixels.side).toBe(512);
    expect(TRAINING_PROFILES['sdxl']!.pixels.side).toBe(1024);
    expect(trainingSide(512, [])).toBe(512);
    expect(trainingSide(512, [{ width: 2000, height: 3000 }])).toBe(512);
    expect(trainingSide(1024, [{ width: 2000, height: 3000 }])).toBe(1024);
    expect(
      trainingSide(1024, [
        { width: 2000, height: 3000 },
        { width: 700, height: 400 },
      ]),
    ).toBe(384);
    expect(trainingSide(512, [{ width: 100, height: 64 }])).toBe(64);
    expect(trainingSide(512, [{ width: 40, height: 30 }])).toBe(64);
    const small = train({ base_model: 'sdxl' }, sized([300, 200], [2048, 2048], [1500, 1000]));
    expect(nodesOf(small, 'ImageScale').map((node) => [node.inputs.width, node.inputs.height])).toEqual([
      [192, 192],
      [192, 192],
      [192, 192],
      // The sample, drawn at SDXL's own size, answered at the training size.
      [192, 192],
    ]);
    expect(nodesOf(small, 'EmptyLatentImage')[0]!.inputs).toMatchObject({
      width: 1024,
      height: 1024,
      batch_size: 1,
    });
  });

  it('draws validation_prompt on the base model with the trained LoRA applied, as the only image the task answers', () => {
    const workflow = train({ validation_prompt: 'sks dog on the moon' }, { seed: 5 });
    const trainer = trainerOf(workflow);
    const [save] = workflow.outputNodes.map((id) => ({ id, ...workflow.prompt[id]! }));
    expect(workflow.outputNodes).toHaveLength(1);
    expect(save!.class_type).toBe('SaveImage');
    // At the base model's own size, the training size here: nothing to scale.
    const decoded = from(workflow, save!.inputs.images);
    const sampler = from(workflow, decoded.inputs.samples);
    expect(sampler.class_type).toBe('KSampler');
    expect(sampler.inputs).toMatchObject({
      steps: VALIDATION_DRAWING.steps,
      cfg: VALIDATION_DRAWING.cfg,
      sampler_name: VALIDATION_DRAWING.sampler_name,
      seed: 5,
      denoise: 1,
    });
    expect(from(workflow, sampler.inputs.positive).inputs.text).toBe('sks dog on the moon');
    expect(from(workflow, sampler.inputs.negative).inputs.text).toBe('');
    const lora = from(workflow, sampler.inputs.model);
    expect(lora.class_type).toBe('LoraModelLoader');
    expect(lora.inputs.strength_model).toBe(1);
    expect(from(workflow, lora.inputs.lora)).toMatchObject({ id: trainer.id, slot: 1 });
    expect(from(workflow, lora.inputs.model).class_type).toBe('CheckpointLoaderSimple');
  });

  it('draws nothing for an empty validation_prompt: the LoRA is the whole result', () => {
    const workflow = train({ validation_prompt: '  ' });
    expect(workflow.outputNodes).toEqual([]);
    expect(nodesOf(workflow, 'KSampler')).toEqual([]);
    expect(nodesOf(workflow, 'LoraModelLoader')).toEqual([]);
    expect(workflow.modelFile).toBeDefined();
  });

  it("saves the LoRA into a folder of the submission's own, so ComfyUI's counter names it lora_00001_", () => {
    const [first, second] = ['11111111-prompt', '22222222-prompt'].map((submission) =>
      train({}, { submission, filenamePrefix: 'imagegen/task-9/img' }),
    );
    for (const [workflow, submission] of [
      [first!, '11111111-prompt'],
      [second!, '22222222-prompt'],
    ] as const) {
      const [save] = nodesOf(workflow, 'SaveLoRANode');
      expect(save!.inputs.prefix).toBe(`imagegen/task-9/${submission}/lora`);
      expect(from(workflow, save!.inputs.lora)).toMatchObject({ id: trainerOf(workflow).id, slot: 1 });
      // No step count: the name is the prefix and the counter alone.
      expect(save!.inputs.steps).toBeUndefined();
      expect(workflow.modelFile).toEqual({
        filename: 'lora_00001_.safetensors',
        subfolder: `imagegen/task-9/${submission}`,
        type: 'output',
      });
    }
  });

  it('counts the training steps, then the sample, for progress; the task runs from the training node on', () => {
    const workflow = train({ max_train_steps: 12 });
    const trainer = trainerOf(workflow);
    const sampler = nodesOf(workflow, 'KSampler')[0]!;
    expect(workflow.samplingSteps).toEqual([
      { node: trainer.id, steps: 12 },
      { node: sampler.id, steps: VALIDATION_DRAWING.steps },
    ]);
    expect(workflow.runningFrom).toBe(trainer.id);
  });

  it('refuses a Flux base model and a training without photos, naming the field', () => {
    expect(() => compileRequest(TRAIN, { base_model: 'flux' })).toThrow(
      /^base_model: this engine trains sd1\.5 and sdxl checkpoints/,
    );
    expect(() => compileRequest(TRAIN, { images: [] })).toThrow('images: training needs at least one photo');
  });
});
