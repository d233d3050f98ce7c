import { inputSize } from '../chains/image-size.ts';
import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import { REPAINT_MODEL_NEED, repaint, SOFT_REPAINT_NODES } from '../chains/repaint.ts';
import { requestFields } from '../chains/request-fields.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, SAVE_NODES, Workflow } from '../workflow/workflow.ts';

/**
 * `/inpaint_anything/v1`, as Inpaint-Anything does it: the object under the `input_coords` points
 * is segmented with SAM 2 (kijai's ComfyUI-segment-anything-2, which takes points), then
 * - `fill`: the object, its mask grown by 50 px, repainted from the prompt;
 * - `replace`: the object kept and everything around it repainted from the prompt;
 * - `remove`: the object, its mask grown by 15 px, filled in from its surroundings by big-lama
 *   (ComfyUI-RMBG's LaMa remover); like Inpaint-Anything's remove, it reads no prompt.
 * Repainting runs on SDXL (Inpaint-Anything's own uses SD 2 inpainting).
 */
const PIPELINE = '/inpaint_anything/v1';

/**
 * SAM 2.1 large, which the pack fetches into `models/sam2` on first use: the node names it so, and
 * reads `-fp16` in its name at fp16.
 */
const SAM2_MODEL = 'sam2.1_hiera_large.safetensors';
const SAM2_FP16_MODEL = 'sam2.1_hiera_large-fp16.safetensors';

/**
 * The device and precision kijai's loader takes by name, for the server's device: fp16 on CUDA (the
 * pack's `-fp16` file), fp32 on Apple's MPS, and the CPU (where the loader refuses fp16) for any
 * other device. A server that never said is taken for a CUDA one.
 */
export function sam2Device(device: string | undefined): { device: string; precision: string } {
  if (device === undefined || device === 'cuda') return { device: 'cuda', precision: 'fp16' };
  return { device: device === 'mps' ? 'mps' : 'cpu', precision: 'fp32' };
}

/** Inpaint-Anything's mask dilation per operation (its README's `--dilate_kernel_size`). */
const DILATION = { fill: 50, remove: 15 } as const;

const SEGMENT_NODES: readonly NodeClass[] = [
  'DownloadAndLoadSAM2Model',
  'Sam2Segmentation',
  'GrowMask',
  'InvertMask',
];
const REMOVE_NODES: readonly NodeClass[] = ['AILab_LamaRemover'];

const NO_POINTS = 'needs at least one x, y point on the object';
const PAIRS = 'the numbers are x, y pairs, so an odd count is refused';

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(IMAGE_NODES.load, SEGMENT_NODES, SOFT_REPAINT_NODES, REMOVE_NODES, SAVE_NODES),
    packs: packNeeds('ComfyUI-segment-anything-2', {
      pack: 'ComfyUI-RMBG',
      when: 'only with `operation: "remove"`',
    }),
    models: [
      REPAINT_MODEL_NEED,
      {
        folder: 'sam2',
        what: `\`${SAM2_FP16_MODEL}\` on a CUDA server, \`${SAM2_MODEL}\` on others (the pack fetches it on first use)`,
      },
      { folder: 'RMBG/Lama', what: '`big-lama.pt` for `remove` (ComfyUI-RMBG fetches it on first use)' },
    ],
    refuses: [
      { field: 'input_coords', why: `when absent: ${NO_POINTS}` },
      { field: 'input_coords', why: PAIRS },
    ],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const coords = fields.list('input_coords');
    if (coords.length === 0) fields.refuse('input_coords', NO_POINTS);
    if (coords.length % 2 !== 0) fields.refuse('input_coords', `${coords.length} numbers: ${PAIRS}`);
    const points = [];
    for (let i = 0; i < coords.length; i += 2) points.push({ x: coords[i], y: coords[i + 1] });
    const w = new Workflow(ctx.filenamePrefix);
    const picture = loadImage(w, fields.image('input_image'));
    const object = w
      .node('Sam2Segmentation', {
        sam2_model: w
          .node('DownloadAndLoadSAM2Model', {
            model: SAM2_MODEL,
            segmentor: 'single_image',
            ...sam2Device(ctx.device),
          })
          .out(0),
        image: picture,
        keep_model_loaded: true,
        coordinates_positive: JSON.stringify(points),
      })
      .out(0);
    const grown = (expand: number): Link<'MASK'> =>
      w.node('GrowMask', { mask: object, expand, tapered_corners: true }).out(0);
    const operation = fields.string('operation');
    const prompt = fields.string('prompt');
    const result =
      operation === 'remove'
        ? w
            .node('AILab_LamaRemover', {
              images: picture,
              masks: grown(DILATION.remove),
              // A plain binary mask: the object's pixels, no extra blur.
              removal_strength: 127,
              edge_smoothness: 0,
            })
            .out(0)
        : repaint(w, ctx, {
            picture,
            pictureSize: inputSize(ctx, 'input_image'),
            soften: operation === 'fill',
            mask: operation === 'fill' ? grown(DILATION.fill) : w.node('InvertMask', { mask: object }).out(0),
            prompt,
            negativePrompt: '',
          });
    w.save(result);
    return w.compiled();
  },
};
