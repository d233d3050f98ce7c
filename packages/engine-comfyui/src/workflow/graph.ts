/**
 * A tiny builder for ComfyUI API-format graphs: nodes by class name with typed inputs, links as
 * typed handles to a node's output, node ids assigned here (never written by hand).
 *
 *   const g = new Graph();
 *   const [model, clip, vae] = g.node('CheckpointLoaderSimple', { ckpt_name }).outputs;
 *   const positive = g.node('CLIPTextEncode', { text, clip }).out(0);
 */
import type { ApiNode, ApiPrompt } from '../contracts.ts';
import {
  type InputType,
  type LinkType,
  NODE_TYPES,
  type NodeClass,
  type NodeTyping,
  type OutputType,
} from './node-types.ts';

/** A handle to one output of a node: where a link comes from, and what travels along it. */
export interface Link<T extends OutputType = OutputType> {
  readonly node: string;
  readonly slot: number;
  readonly type: T;
}

type Typing<C extends NodeClass> = (typeof NODE_TYPES)[C];

type Value<T extends InputType> = T extends '*'
  ? Link
  : T extends LinkType
    ? Link<T>
    : T extends 'INT' | 'FLOAT'
      ? number
      : T extends 'BOOLEAN'
        ? boolean
        : // A COMBO's list may hold numbers (ReActor's console_log_level: [0, 1, 2]).
          T extends 'COMBO'
          ? string | number
          : string;

type OptionalOf<C extends NodeClass> = Typing<C> extends { readonly optional: infer O } ? O : object;

type Values<T> = { [K in keyof T]: T[K] extends InputType ? Value<T[K]> : never };

/** The inputs a node of class C takes: its required ones, and optionally the optional ones. */
export type NodeInputs<C extends NodeClass> = Values<Typing<C>['inputs']> & Partial<Values<OptionalOf<C>>>;

/** A tuple of links, one per output type (mapped over a type parameter, so it stays a tuple). */
type Links<T extends readonly OutputType[]> = { [I in keyof T]: Link<T[I]> };

type Outputs<C extends NodeClass> = Links<Typing<C>['outputs']>;

export interface NodeHandle<C extends NodeClass> {
  readonly id: string;
  readonly classType: C;
  /** Every output, in slot order (destructure them). */
  readonly outputs: Outputs<C>;
  out<I extends number & keyof Typing<C>['outputs']>(slot: I): Outputs<C>[I];
}

export class Graph {
  private readonly nodes: Record<string, ApiNode> = {};
  private nextId = 1;

  node<C extends NodeClass>(classType: C, inputs: NodeInputs<C>): NodeHandle<C> {
    const typing: NodeTyping = NODE_TYPES[classType];
    const missing = Object.keys(typing.inputs).filter(
      (name) => (inputs as Record<string, unknown>)[name] === undefined,
    );
    if (missing.length > 0) throw new Error(`${classType} needs ${missing.join(', ')}`);
    const id = String(this.nextId++);
    const wire: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(inputs as Record<string, unknown>)) {
      if (value === undefined) continue;
      const expected = typing.inputs[name] ?? typing.optional?.[name];
      if (expected === undefined) throw new Error(`${classType} has no input ${name}`);
      wire[name] = isLink(value) ? this.linkTo(classType, name, expected, value) : value;
    }
    this.nodes[id] = { class_type: classType, inputs: wire };
    const outputs = typing.outputs.map((type, slot) => ({ node: id, slot, type }));
    return {
      id,
      classType,
      outputs: outputs as Outputs<C>,
      out: (slot) => outputs[slot] as never,
    };
  }

  /** The graph as `POST /prompt` takes it. */
  toPrompt(): ApiPrompt {
    return structuredClone(this.nodes);
  }

  private linkTo(
    classType: string,
    name: string,
    expected: InputType,
    link: Link,
  ): readonly [string, number] {
    // The types already agree where TypeScript checked the call; this guards the casts.
    if (expected !== '*' && link.type !== expected)
      throw new Error(`${classType}.${name} takes ${expected}, not ${link.type}`);
    if (!this.nodes[link.node])
      throw new Error(
        `${classType}.${name} links to node ${link.node}, which is not in this graph (another graph's node?)`,
      );
    return [link.node, link.slot];
  }
}

function isLink(value: unknown): value is Link {
  return typeof value === 'object' && value !== null && 'node' in value && 'slot' in value && 'type' in value;
}
