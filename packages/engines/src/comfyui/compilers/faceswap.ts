import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import { RequestFields } from '../chains/request-fields.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, SAVE_NODES, Workflow } from '../workflow/workflow.ts';

/**
 * `/faceswap/v1`: the face of `input_face` put into `input_image` with ComfyUI-ReActor (insightface's
 * inswapper, the model the usual face-swap services run), the first face of each picture, no face
 * restoration after it: the swap itself, at the size of `input_image`.
 */
const PIPELINE = '/faceswap/v1';

/** insightface's swapper, in the folder ReActor lists it from (`models/insightface`). */
export const FACE_SWAP_MODEL = 'inswapper_128.onnx';

const SWAP_NODES: readonly NodeClass[] = ['ReActorFaceSwap'];

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(IMAGE_NODES.load, SWAP_NODES, SAVE_NODES),
    packs: packNeeds('ComfyUI-ReActor'),
    models: [
      { folder: 'insightface', what: `\`${FACE_SWAP_MODEL}\`` },
      {
        folder: 'facedetection',
        what: 'the RetinaFace detector `detection_Resnet50_Final.pth` (ReActor fetches it on first use when the server can reach huggingface.co)',
      },
    ],
  },
  compile(ctx) {
    const fields = new RequestFields(PIPELINE, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    const swapped = w
      .node('ReActorFaceSwap', {
        enabled: true,
        input_image: loadImage(w, fields.image('input_image')),
        source_image: loadImage(w, fields.image('input_face')),
        swap_model: FACE_SWAP_MODEL,
        facedetection: 'retinaface_resnet50',
        face_restore_model: 'none',
        face_restore_visibility: 1,
        codeformer_weight: 0.5,
        detect_gender_input: 'no',
        detect_gender_source: 'no',
        input_faces_index: '0',
        source_faces_index: '0',
        console_log_level: 1,
      })
      .out(0);
    w.save(swapped);
    return w.compiled();
  },
};
