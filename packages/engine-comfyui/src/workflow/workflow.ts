import path from 'node:path/posix';
import type { CompiledWorkflow, FileRef } from '../contracts.ts';
import { Graph, type Link, type NodeHandle, type NodeInputs } from './graph.ts';
import type { NodeClass } from './node-types.ts';

/**
 * Each chain exports the node classes it adds; a compiler's `requires.nodes` is the union of the
 * chains it composes, in order, each class once.
 */
export function nodeClasses(...groups: readonly (readonly NodeClass[])[]): NodeClass[] {
  return [...new Set(groups.flat())];
}

/** Sampling and decoding, and saving the result. */
export const SAMPLE_NODES: readonly NodeClass[] = ['KSampler', 'VAEDecode'];
export const SAVE_NODES: readonly NodeClass[] = ['SaveImage'];
export const SHOW_NODES: readonly NodeClass[] = ['PreviewAny'];

/**
 * A graph being compiled for one task, with what the engine needs beside it: the sampling nodes
 * and their steps (progress), the output nodes (results), the checkpoint (model affinity). Sampling
 * and saving go through here so none of them can be left out of the bookkeeping.
 */
export class Workflow extends Graph {
  private readonly sampling: { node: string; steps: number }[] = [];
  private readonly outputNodes: string[] = [];
  private checkpoint: string | undefined;
  private runningFrom: string | undefined;
  private modelFile: FileRef | undefined;
  private readonly notes: string[] = [];

  constructor(private readonly filenamePrefix: string) {
    super();
  }

  /** The main model file the graph loads (the first one named wins: it is the one that stays loaded longest). */
  usesModel(file: string): void {
    this.checkpoint ??= file;
  }

  /** A KSampler, counted for progress. */
  sample(inputs: NodeInputs<'KSampler'>): Link<'LATENT'> {
    const sampler = this.node('KSampler', inputs);
    this.sampling.push({ node: sampler.id, steps: inputs.steps });
    return sampler.out(0);
  }

  /**
   * A KSamplerAdvanced that runs steps `start_at_step` to `end_at_step` of a `steps` schedule,
   * counted for progress with the steps it runs.
   */
  sampleSteps(inputs: NodeInputs<'KSamplerAdvanced'>): Link<'LATENT'> {
    const sampler = this.node('KSamplerAdvanced', inputs);
    const steps = Math.min(inputs.end_at_step, inputs.steps) - inputs.start_at_step;
    this.sampling.push({ node: sampler.id, steps });
    return sampler.out(0);
  }

  /**
   * A TrainLoraNode, counted for progress with its training steps; its start turns the task from
   * initialising to running.
   */
  train(inputs: NodeInputs<'TrainLoraNode'>): NodeHandle<'TrainLoraNode'> {
    const trainer = this.node('TrainLoraNode', inputs);
    this.sampling.push({ node: trainer.id, steps: inputs.steps });
    this.runningFrom ??= trainer.id;
    return trainer;
  }

  /**
   * SaveLoRANode into a folder of the submission's own, beside the task's images: the file is the
   * task's model. The node tells no one the name it gives (it answers no `ui`), which ComfyUI's
   * `get_save_image_path` makes `<name>_<counter>_.safetensors` with the counter after the highest
   * in the folder: 1 in a folder no other submission writes.
   */
  saveLora(lora: Link<'LORA_MODEL'>, submission: string): void {
    const subfolder = path.join(path.dirname(this.filenamePrefix), submission);
    this.node('SaveLoRANode', { lora, prefix: `${subfolder}/lora` });
    this.modelFile = { filename: 'lora_00001_.safetensors', subfolder, type: 'output' };
  }

  /** A note for the task's owner: where the graph draws otherwise than the request reads. */
  note(text: string): void {
    if (!this.notes.includes(text)) this.notes.push(text);
  }

  /** SaveImage under the task's own prefix: its files are the task's result. */
  save(images: Link<'IMAGE'>): void {
    this.outputNodes.push(this.node('SaveImage', { images, filename_prefix: this.filenamePrefix }).id);
  }

  /** PreviewAny of a text value: what it shows (history's `text`) is the task's text result. */
  show(text: Link<'STRING'>): void {
    this.outputNodes.push(this.node('PreviewAny', { source: text }).id);
  }

  compiled(): CompiledWorkflow {
    if (this.outputNodes.length === 0 && !this.modelFile)
      throw new Error('a workflow saves at least one image or model, or shows a text');
    return {
      prompt: this.toPrompt(),
      outputNodes: [...this.outputNodes],
      ...(this.checkpoint ? { checkpoint: this.checkpoint } : {}),
      samplingSteps: [...this.sampling],
      ...(this.runningFrom ? { runningFrom: this.runningFrom } : {}),
      ...(this.modelFile ? { modelFile: this.modelFile } : {}),
      ...(this.notes.length > 0 ? { notes: [...this.notes] } : {}),
    };
  }
}
