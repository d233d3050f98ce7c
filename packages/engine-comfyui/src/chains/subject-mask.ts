import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';

/**
 * The subject of a picture as a mask: ComfyUI-RMBG's RMBG node with BRIA's RMBG-2.0 (BiRefNet).
 *
 * The node declares its settings optional but reads each of them without a default
 * (`params["process_res"]`, `params["sensitivity"]`, ...): a graph that leaves them out is
 * accepted by POST /prompt and then fails on the server with a KeyError. So every one is
 * written, at the value the node declares as its default (RMBG-2.0's own 1024 px resolution).
 */
export const SUBJECT_MASK_NODES: readonly NodeClass[] = ['RMBG'];

export const SUBJECT_MODEL_NEED = {
  folder: 'RMBG/RMBG-2.0',
  what: 'briaai/RMBG-2.0 (ComfyUI-RMBG fetches it on first use)',
} as const;

const RMBG_SETTINGS = {
  sensitivity: 1,
  process_res: 1024,
  mask_blur: 0,
  mask_offset: 0,
  invert_output: false,
  refine_foreground: false,
  background: 'Alpha',
} as const;

export function subjectMask(w: Workflow, picture: Link<'IMAGE'>): Link<'MASK'> {
  return w.node('RMBG', { image: picture, model: 'RMBG-2.0', ...RMBG_SETTINGS }).out(1);
}
