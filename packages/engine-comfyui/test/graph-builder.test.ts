import { capturedObjectInfo, objectInfoWithPacks, validatePrompt } from '@imagegen/comfyui-fake';
import { describe, expect, it } from 'vitest';
import { ALL_NODE_PACKS } from '../src/node-packs.ts';
import { Graph, type Link } from '../src/workflow/graph.ts';
import { NODE_TYPES, type NodeTyping } from '../src/workflow/node-types.ts';

/** The recorded core definitions and every node pack's, as written from the pack's source. */
const withPacks = objectInfoWithPacks(ALL_NODE_PACKS);

describe('the node typings', () => {
  for (const [classType, typing] of Object.entries(NODE_TYPES) as [string, NodeTyping][]) {
    it(`declare ${classType} as the recorded ComfyUI (or its node pack) does`, () => {
      const definition = withPacks[classType];
      expect(definition, classType).toBeDefined();
      if (!definition) return;
      expect(typing.outputs).toEqual(definition.output);
      // Every required input is declared, so a compiler cannot leave one out.
      expect(Object.keys(typing.inputs).sort()).toEqual(Object.keys(definition.input.required ?? {}).sort());
      const declared = { ...typing.inputs, ...typing.optional };
      for (const [name, type] of Object.entries(declared)) {
        const category = name in typing.inputs ? 'required' : 'optional';
        const spec = definition.input[category]?.[name];
        expect(spec, `${classType}.${name}`).toBeDefined();
        const recorded = spec?.[0];
        if (type === 'COMBO') {
          expect(Array.isArray(recorded) || recorded === 'COMBO', `${classType}.${name}`).toBe(true);
        } else {
          expect(recorded, `${classType}.${name}`).toBe(type);
        }
      }
    });
  }
});

describe('the graph builder', () => {
  it('numbers nodes itself and writes links as [node id, output slot]', () => {
    const g = new Graph();
    const [model, clip, vae] = g.node('CheckpointLoaderSimple', {
      ckpt_name: 'random-sd15.safetensors',
    }).outputs;
    const positive = g.node('CLIPTextEncode', { text: 'a cat', clip }).out(0);
    const negative = g.node('CLIPTextEncode', { text: '', clip }).out(0);
    const latent = g.node('EmptyLatentImage', { width: 64, height: 64, batch_size: 1 }).out(0);
    const samples = g
      .node('KSampler', {
        model,
        seed: 1,
        steps: 2,
        cfg: 7,
        sampler_name: 'euler',
        scheduler: 'normal',
        positive,
        negative,
        latent_image: latent,
        denoise: 1,
      })
      .out(0);
    const images = g.node('VAEDecode', { samples, vae }).out(0);
    const save = g.node('SaveImage', { images, filename_prefix: 'task/img' });
    const prompt = g.toPrompt();
    expect(Object.keys(prompt)).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    expect(save.id).toBe('7');
    expect(prompt['5']).toEqual({
      class_type: 'KSampler',
      inputs: {
        model: ['1', 0],
        seed: 1,
        steps: 2,
        cfg: 7,
        sampler_name: 'euler',
        scheduler: 'normal',
        positive: ['2', 0],
        negative: ['3', 0],
        latent_image: ['4', 0],
        denoise: 1,
      },
    });
    expect(prompt['6']?.inputs).toEqual({ samples: ['5', 0], vae: ['1', 2] });
    expect(validatePrompt(capturedObjectInfo(), { prompt })).toMatchObject({ status: 200, nodeErrors: {} });
  });

  it('types each output by its slot', () => {
    const g = new Graph();
    const loader = g.node('CheckpointLoaderSimple', { ckpt_name: 'x' });
    expect([loader.out(0).type, loader.out(1).type, loader.out(2).type]).toEqual(['MODEL', 'CLIP', 'VAE']);
    const clip: Link<'CLIP'> = loader.out(1);
    expect(clip).toEqual({ node: loader.id, slot: 1, type: 'CLIP' });
  });

  it('leaves out optional inputs not given, and writes those given', () => {
    const g = new Graph();
    const [, , vae] = g.node('CheckpointLoaderSimple', { ckpt_name: 'x' }).outputs;
    const cond = g
      .node('CLIPTextEncode', { text: '', clip: g.node('CheckpointLoaderSimple', { ckpt_name: 'y' }).out(1) })
      .out(0);
    const net = g.node('ControlNetLoader', { control_net_name: 'c.safetensors' }).out(0);
    const image = g.node('LoadImage', { image: 'a.png' }).out(0);
    const common = {
      positive: cond,
      negative: cond,
      control_net: net,
      image,
      strength: 1,
      start_percent: 0,
      end_percent: 1,
    };
    const without = g.node('ControlNetApplyAdvanced', common);
    const withVae = g.node('ControlNetApplyAdvanced', { ...common, vae });
    const prompt = g.toPrompt();
    expect(prompt[without.id]?.inputs).not.toHaveProperty('vae');
    expect(prompt[withVae.id]?.inputs['vae']).toEqual(['1', 2]);
  });

  it('refuses, at run time too, a link of the wrong type or from another graph', () => {
    const g = new Graph();
    const clip = g.node('CheckpointLoaderSimple', { ckpt_name: 'x' }).out(1);
    const samples = g.node('EmptyLatentImage', { width: 64, height: 64, batch_size: 1 }).out(0);
    // @ts-expect-error a CLIP does not go into a VAE input: the compiler refuses it first
    expect(() => g.node('VAEDecode', { samples, vae: clip })).toThrow('VAEDecode.vae takes VAE, not CLIP');
    // @ts-expect-error a required input cannot be left out
    expect(() => g.node('VAEDecode', { samples })).toThrow('VAEDecode needs vae');
    const other = new Graph();
    expect(() => other.node('CLIPTextEncode', { text: '', clip: { ...clip, node: '9' } })).toThrow(
      'another graph',
    );
  });
});
