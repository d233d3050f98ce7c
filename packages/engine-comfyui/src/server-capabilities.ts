import { modelKind } from './client/rejection.ts';
import type { ApiPrompt, InputSpec, ObjectInfo } from './contracts.ts';
import { NODE_PACK_CLASSES, type NodePack } from './node-packs.ts';

/**
 * What one ComfyUI server can run, read from the server itself (`GET /object_info`): the node
 * classes installed and, for each input that takes one of a list (a COMBO), the values it offers.
 * ComfyUI refuses a graph naming a value outside such a list (`value_not_in_list`), and its model
 * loaders list exactly the files of their folders there, so the same list says which models the
 * server holds, under the names its loaders take (legacy folders and packs' own folders included,
 * which `/models/<folder>` cannot answer for).
 */

/** One thing a graph needs of a server: a node class, or a value one of its inputs must offer. */
export type GraphNeed =
  | { readonly kind: 'class'; readonly classType: string }
  | { readonly kind: 'value'; readonly classType: string; readonly input: string; readonly value: string };

/** Inputs whose value is a file the task itself brings (uploaded before the prompt), never a need. */
const UPLOADED_INPUTS: Readonly<Record<string, readonly string[]>> = {
  LoadImage: ['image'],
  LoadImageMask: ['image'],
};

/**
 * What a compiled graph needs of the server that runs it: its node classes, and each string value
 * given to an input that the node definitions (`reference`, any server's) declare as a list. Values
 * `skip` says the task brings (the owner's model files, checked on their own) are left out.
 */
export function graphNeeds(
  prompt: ApiPrompt,
  reference: ObjectInfo | undefined,
  skip: (value: string) => boolean = () => false,
): GraphNeed[] {
  const needs = new Map<string, GraphNeed>();
  for (const node of Object.values(prompt)) {
    const classType = node.class_type;
    needs.set(`c\u0000${classType}`, { kind: 'class', classType });
    const definition = reference?.[classType];
    if (!definition) continue;
    for (const [input, value] of Object.entries(node.inputs)) {
      if (typeof value !== 'string' || skip(value) || UPLOADED_INPUTS[classType]?.includes(input)) continue;
      const spec = definition.input.required?.[input] ?? definition.input.optional?.[input];
      if (!spec || choices(spec) === undefined || spec[1]?.['image_upload']) continue;
      needs.set(`v\u0000${classType}\u0000${input}\u0000${value}`, {
        kind: 'value',
        classType,
        input,
        value,
      });
    }
  }
  return [...needs.values()];
}

export class ServerCapabilities {
  private readonly offered = new Map<string, ReadonlySet<string>>();

  constructor(
    readonly objectInfo: ObjectInfo,
    /** When it was read (Date.now()). */
    readonly readAt: number,
  ) {}

  get classCount(): number {
    return Object.keys(this.objectInfo).length;
  }

  has(classType: string): boolean {
    return Object.hasOwn(this.objectInfo, classType);
  }

  /** The needs this server does not meet, in words: `node class X`, `the checkpoint 'y'`. */
  lacks(needs: readonly GraphNeed[]): string[] {
    const missing: string[] = [];
    for (const need of needs) {
      if (need.kind === 'class') {
        if (!this.has(need.classType)) missing.push(`node class ${need.classType}`);
      } else if (this.has(need.classType) && !this.offers(need.classType, need.input, need.value)) {
        missing.push(describeValue(need));
      }
    }
    return missing;
  }

  private offers(classType: string, input: string, value: string): boolean {
    const key = `${classType}\u0000${input}`;
    let values = this.offered.get(key);
    if (!values) {
      const inputs = this.objectInfo[classType]?.input;
      const spec = inputs?.required?.[input] ?? inputs?.optional?.[input];
      values = new Set((spec ? choices(spec) : undefined)?.map(String) ?? []);
      this.offered.set(key, values);
    }
    return values.has(value);
  }
}

/** A need in the words an operator reads: the model's kind and file, else the node's input. */
export function describeValue(need: Extract<GraphNeed, { kind: 'value' }>): string {
  const kind = modelKind(need.classType, need.input);
  return kind ? `the ${kind} '${need.value}'` : `${need.classType}'s ${need.input} '${need.value}'`;
}

/** A COMBO's allowed values, in either declaration form: `[[values], opts]` or `["COMBO", {options}]`. */
function choices(spec: InputSpec): readonly unknown[] | undefined {
  if (Array.isArray(spec[0])) return spec[0];
  const options = spec[1]?.['options'];
  return spec[0] === 'COMBO' && Array.isArray(options) ? options : undefined;
}

/** The node packs none of whose classes the compilers use are installed on a server. */
export function missingPacks(capabilities: ServerCapabilities): NodePack[] {
  return (Object.entries(NODE_PACK_CLASSES) as [NodePack, readonly string[]][])
    .filter(([, classes]) => !classes.some((classType) => capabilities.has(classType)))
    .map(([pack]) => pack);
}
