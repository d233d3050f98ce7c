import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { RequestFields } from './request-fields.ts';

/** The contract's directions as the sides ImagePadForOutpaint pads. */
const SIDES = { left: 'left', right: 'right', up: 'top', down: 'bottom' } as const;

/** How far the new pixels blend into the old ones (ImagePadForOutpaint's own default). */
export const OUTPAINT_FEATHERING = 40;

/** The fields the outpainting padding reads. */
export interface OutpaintFields {
  readonly direction: readonly (keyof typeof SIDES)[] | undefined;
  readonly expansion: readonly number[] | undefined;
}

/**
 * `direction` with `expansion` (pixels per direction in the same order, or one value for all) as
 * padding on each side; a direction named twice is padded twice.
 */
export function outpaintPadding(
  fields: RequestFields<OutpaintFields>,
): Record<'left' | 'right' | 'top' | 'bottom', number> {
  const directions = fields.list('direction');
  const expansion = fields.list('expansion');
  if (expansion.length !== 1 && expansion.length !== directions.length) {
    fields.refuse(
      'expansion',
      `${expansion.length} value(s) for ${directions.length} direction(s); send one for all, or one per direction`,
    );
  }
  const padding = { left: 0, right: 0, top: 0, bottom: 0 };
  directions.forEach((direction, i) => {
    padding[SIDES[direction]] += expansion[expansion.length === 1 ? 0 : i]!;
  });
  return padding;
}

export const OUTPAINT_NODES: readonly NodeClass[] = ['ImagePadForOutpaint'];

/**
 * The picture on a larger canvas, and the mask of the new part (to be painted), `feathering` px of
 * the old picture's edge blending into it.
 */
export function padForOutpaint(
  w: Workflow,
  fields: RequestFields<OutpaintFields>,
  image: Link<'IMAGE'>,
  feathering: number = OUTPAINT_FEATHERING,
): { pixels: Link<'IMAGE'>; mask: Link<'MASK'> } {
  const [pixels, mask] = w.node('ImagePadForOutpaint', {
    image,
    ...outpaintPadding(fields),
    feathering,
  }).outputs;
  return { pixels, mask };
}
