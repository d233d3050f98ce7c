import { FACE_SWAP_MODEL_NEEDS, FACE_SWAP_NODES, swapFace } from '../chains/face-swap.ts';
import { inputSize } from '../chains/image-size.ts';
import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import { REPAINT_MODEL_NEED, repaint, SOFT_REPAINT_NODES } from '../chains/repaint.ts';
import { requestFields } from '../chains/request-fields.ts';
import { SUBJECT_MASK_NODES, subjectMask } from '../chains/subject-mask.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/modelswitch/v1`: a new person in the same outfit, on the same background. The person is cut
 * out with RMBG-2.0 and the outfit found with ComfyUI-RMBG's clothes parser; the person without
 * the outfit (face, hair, skin) is repainted on SDXL from the prompt, the rest kept pixel for pixel.
 * With `input_face`, that face is then put on the new person with ReActor.
 */
const PIPELINE = '/modelswitch/v1';

/** The clothes parser's classes that make up an outfit (what stays). */
const OUTFIT = {
  Hat: true,
  'Upper-clothes': true,
  Skirt: true,
  Dress: true,
  Belt: true,
  Pants: true,
  Bag: true,
  Scarf: true,
  'Left-shoe': true,
  'Right-shoe': true,
} as const;

const PERSON_NODES: readonly NodeClass[] = [...SUBJECT_MASK_NODES, 'ClothesSegment', 'MaskComposite'];

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(IMAGE_NODES.load, PERSON_NODES, SOFT_REPAINT_NODES, FACE_SWAP_NODES),
    packs: packNeeds('ComfyUI-RMBG', { pack: 'ComfyUI-ReActor', when: 'only with `input_face`' }),
    models: [
      REPAINT_MODEL_NEED,
      {
        folder: 'RMBG',
        what: 'briaai/RMBG-2.0 and the SegFormer clothes parser (ComfyUI-RMBG fetches both on first use)',
      },
      ...FACE_SWAP_MODEL_NEEDS.map((need) => ({ ...need, what: `${need.what} (with \`input_face\`)` })),
    ],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    const picture = loadImage(w, fields.image('input_image'));
    const person = subjectMask(w, picture);
    const [, outfit] = w.node('ClothesSegment', { images: picture, ...OUTFIT }).outputs;
    const body = w
      .node('MaskComposite', { destination: person, source: outfit, x: 0, y: 0, operation: 'subtract' })
      .out(0);
    const painted = repaint(w, ctx, {
      picture,
      pictureSize: inputSize(ctx, 'input_image'),
      soften: true,
      mask: body,
      prompt: fields.string('prompt'),
      negativePrompt: '',
    });
    w.save(
      fields.has('input_face') ? swapFace(w, painted, loadImage(w, fields.image('input_face'))) : painted,
    );
    return w.compiled();
  },
};
