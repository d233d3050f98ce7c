import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { RequestFields } from './request-fields.ts';

/**
 * Style-aligned generation (`attn`, `adain`, `style`): Google Research's StyleAligned, which makes
 * every picture of a batch share the style of its first by sharing self-attention with it (each
 * picture's keys and values joined with the first one's) and, with AdaIN, normalising each
 * picture's queries and keys to the first one's statistics. The original service ran the paper's
 * diffusers handler (`StyleAlignedArgs`: `share_attention`, `adain_queries`/`adain_keys`); on
 * ComfyUI it is style_aligned_comfy's StyleAlignedBatchAlign, which patches the model's
 * self-attention as the paper's handler does:
 *
 * - `share_attn` is the pack's AdaIN switch (its attention sharing is always on, being the method):
 *   `q+k` (the paper's default: queries and keys) unless `adain` is false, then `disabled`;
 * - `scale` is `style`, how strongly the first picture's keys weigh in the others' attention (the
 *   pack's default 1 where the request sends none);
 * - `share_norm` is `disabled`, the paper's SDXL setting (`share_group_norm` and `share_layer_norm`
 *   false). It also keeps the model as loaded: the pack's node shares the normalisation layers by
 *   patching them on the model it is given rather than on its clone, which would leave ComfyUI's
 *   cached checkpoint patched for every later prompt on the server.
 *
 * Alignment runs when the request asks for any part of it: `attn` or `adain` true, or a `style`.
 */
export interface StyleAlignedFields {
  readonly attn?: boolean | undefined;
  readonly adain?: boolean | undefined;
  /** A number on the SD paths; `/generate/v1`'s preset name (a string) is the prompt styles'. */
  readonly style: string | number | null | undefined;
}

export const STYLE_ALIGNED_NODES: readonly NodeClass[] = ['StyleAlignedBatchAlign'];

/** The pack's own default strength (StyleAlignedBatchAlign's `scale`). */
const DEFAULT_SCALE = 1;

/** Why `attn: false` is not honoured while alignment runs, as the task's note and the catalogue say it. */
export const ATTENTION_ALWAYS_SHARED =
  'false is not honoured while `adain` or `style` asks for alignment: style_aligned_comfy shares the first picture’s attention whenever it aligns a batch (attention sharing is the method), so it is shared';

/** Why a batch of one is not changed, as the task's note says it. */
export const NOTHING_TO_ALIGN =
  'style alignment makes the pictures of one batch share the style of its first; with `samples: 1` there is no other picture to align, so the picture is drawn as without it';

/** Whether the request asks for style alignment. */
export function wantsStyleAlignment(fields: RequestFields<StyleAlignedFields>): boolean {
  const input = fields.input;
  return input.attn === true || input.adain === true || typeof input.style === 'number';
}

/** `model` patched for style alignment where the request asks for it, else as it is. */
export function applyStyleAlignment(
  w: Workflow,
  fields: RequestFields<StyleAlignedFields>,
  model: Link<'MODEL'>,
  samples: number,
): Link<'MODEL'> {
  if (!wantsStyleAlignment(fields)) return model;
  const input = fields.input;
  if (input.attn === false) w.note(`attn: ${ATTENTION_ALWAYS_SHARED}`);
  if (samples === 1) w.note(`${firstAsked(input)}: ${NOTHING_TO_ALIGN}`);
  return w
    .node('StyleAlignedBatchAlign', {
      model,
      share_norm: 'disabled',
      share_attn: input.adain === false ? 'disabled' : 'q+k',
      scale: typeof input.style === 'number' ? input.style : DEFAULT_SCALE,
    })
    .out(0);
}

/** The first field that asked for alignment, for a note. */
function firstAsked(input: StyleAlignedFields): string {
  if (input.attn === true) return 'attn';
  if (input.adain === true) return 'adain';
  return 'style';
}
