import { FACE_SWAP_MODEL_NEEDS, FACE_SWAP_NODES, swapFace } from '../chains/face-swap.ts';
import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import { requestFields } from '../chains/request-fields.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import { nodeClasses, SAVE_NODES, Workflow } from '../workflow/workflow.ts';

/**
 * `/faceswap/v1`: the face of `input_face` put into `input_image` with ComfyUI-ReActor: the swap
 * itself, at the size of `input_image`.
 */
const PIPELINE = '/faceswap/v1';

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(IMAGE_NODES.load, FACE_SWAP_NODES, SAVE_NODES),
    packs: packNeeds('ComfyUI-ReActor'),
    models: [...FACE_SWAP_MODEL_NEEDS],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    w.save(swapFace(w, loadImage(w, fields.image('input_image')), loadImage(w, fields.image('input_face'))));
    return w.compiled();
  },
};
