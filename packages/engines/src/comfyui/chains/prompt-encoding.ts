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

/**
 * The prompt with each of `embeddings` written in as `embedding:<name>` words; one of the owner's
 * embeddings (of `base`, the graph's base model, when given) by its file, `<model_id>.<ext>`.
 */
export function withEmbeddings(fields: RequestFields, text: string, base?: string): string {
  const wanted = { type: 'embedding', ...(base ? { base } : {}) } as const;
  const names = fields
    .list<string>('embeddings')
    .map((name) => ownerModelFile(fields, 'embeddings', name, wanted) ?? name);
  for (const name of names) {
    if (!EMBEDDING_NAME.test(name)) {
      fields.refuse(
        'embeddings',
        `'${name}' cannot be named in a ComfyUI prompt (no spaces, commas, colons or brackets)`,
      );
    }
  }
  return [text, ...names.map((name) => `embedding:${name}`)].filter((part) => part !== '').join(' ');
}

export const PROMPT_NODES: readonly NodeClass[] = ['CLIPTextEncode'];
export const CLIP_SKIP_NODES: readonly NodeClass[] = ['CLIPSetLastLayer'];

/** clip_skip n (A1111's count, 1 = the last layer) as CLIPSetLastLayer -n; absent: the CLIP as is. */
export function skipClipLayers(w: Workflow, clip: Link<'CLIP'>, clipSkip: number | undefined): Link<'CLIP'> {
  if (clipSkip === undefined) return clip;
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
