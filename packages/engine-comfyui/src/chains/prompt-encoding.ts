import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { RequestFields } from './request-fields.ts';
import { ownerModelFile } from './user-models.ts';

/**
 * Prompts to conditioning: clip_skip, textual-inversion embeddings and the two CLIPTextEncode
 * nodes every diffusion graph starts from.
 */

/**
 * ComfyUI finds an embedding by a word of the prompt `embedding:<name>` (the prompt is split on
 * spaces, and parentheses carry weights), so a name holding those cannot be written into a prompt.
 */
const EMBEDDING_NAME = /^[^\s()[\]\\:,]+$/;

export interface Prompts {
  readonly positive: string;
  readonly negative: string;
}

/** The field withEmbeddings reads. */
export interface EmbeddingFields {
  readonly embeddings: readonly string[] | null | undefined;
}

/**
 * The prompts with each of `embeddings` written in as an `embedding:<name>` word where the request
 * wrote its name: a textual inversion acts where its word stands, and the usual negative ones
 * (`easynegative`, `bad-hands-5`) are written into the negative prompt. A name written in neither
 * prompt is added at the end of the positive one, so the field never goes unused. One of the
 * owner's embeddings (of `base`, the graph's base model, when given) is its file,
 * `<model_id>.<ext>`; a name is also found written without its file extension.
 */
export function withEmbeddings(
  fields: RequestFields<EmbeddingFields>,
  prompts: Prompts,
  base?: string,
): Prompts {
  const wanted = { type: 'embedding', ...(base ? { base } : {}) } as const;
  // Each word an embedding may be written as (its name, or its name without the file extension,
  // in any case) to its file; a word two names share stands for the first.
  const files = new Map<string, string>();
  const named: string[] = [];
  for (const name of fields.list('embeddings')) {
    const file = ownerModelFile(fields, 'embeddings', name, wanted) ?? name;
    if (!EMBEDDING_NAME.test(file)) {
      fields.refuse(
        'embeddings',
        `'${file}' cannot be named in a ComfyUI prompt (no spaces, commas, colons or brackets)`,
      );
    }
    for (const word of new Set([name, name.replace(FILE_EXTENSION, '')])) {
      if (!files.has(word.toLowerCase())) files.set(word.toLowerCase(), file);
    }
    named.push(file);
  }
  if (named.length === 0) return prompts;
  const written = new Set<string>();
  const writeIn = (text: string) =>
    text.replace(PROMPT_WORD, (match, before: string, word: string) => {
      const file = files.get(word.toLowerCase());
      if (file === undefined) return match;
      written.add(file);
      return `${before === ',' ? ', ' : before}embedding:${file}`;
    });
  const positive = writeIn(prompts.positive);
  const negative = writeIn(prompts.negative);
  const unwritten = [...new Set(named)]
    .filter((file) => !written.has(file))
    .map((file) => `embedding:${file}`);
  return { positive: [positive, ...unwritten].filter((part) => part !== '').join(' '), negative };
}

const FILE_EXTENSION = /\.(safetensors|pt|bin|pth|ckpt)$/i;

/**
 * A word of a prompt (perhaps already written as ComfyUI's `embedding:<name>`), after the start, a
 * space, an opening bracket or a comma, up to a space, a closing bracket, a comma, a colon (a
 * weight) or the end. ComfyUI reads `embedding:` only at the start of a space-separated word, so a
 * comma right before it gets a space. One pass over each prompt finds every name, so a long prompt
 * with many embeddings costs its length plus their count, not their product.
 */
const PROMPT_WORD = /(^|[\s(]|,\s*)(?:embedding:)?([^\s(),:]+)(?=$|[\s),:])/gi;

export const PROMPT_NODES: readonly NodeClass[] = ['CLIPTextEncode'];
export const CLIP_SKIP_NODES: readonly NodeClass[] = ['CLIPSetLastLayer'];

/**
 * `clip_skip` counts layers as A1111 and ComfyUI users count them: 1 is the text encoder's last
 * layer, 2 the one before it. SD1.5 reads the last layer by default, so n is CLIPSetLastLayer -n.
 * SDXL's text encoders already read the penultimate layer (ComfyUI's SDXL CLIP, diffusers and A1111
 * alike), and CLIPSetLastLayer -1 would move them to the last one, which SDXL was not trained on:
 * there 1 and 2 keep the model's own layer and n from 3 reads layer -n. The model's own layer is
 * its profile's (`clipLayer`). Absent: the model's own.
 */
export function skipClipLayers(
  w: Workflow,
  clip: Link<'CLIP'>,
  clipSkip: number | undefined,
  ownLayer: number,
): Link<'CLIP'> {
  if (clipSkip === undefined || clipSkip <= ownLayer) return clip;
  return w.node('CLIPSetLastLayer', { clip, stop_at_clip_layer: -clipSkip }).out(0);
}

export interface Conditioning {
  readonly positive: Link<'CONDITIONING'>;
  readonly negative: Link<'CONDITIONING'>;
}

export function encodePrompts(
  w: Workflow,
  clip: Link<'CLIP'>,
  positive: string,
  negative: string,
): Conditioning {
  return {
    positive: w.node('CLIPTextEncode', { text: positive, clip }).out(0),
    negative: w.node('CLIPTextEncode', { text: negative, clip }).out(0),
  };
}
