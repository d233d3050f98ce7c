import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';

/**
 * A face put into a picture with ComfyUI-ReActor (insightface's inswapper, the model the usual
 * face-swap services run): the first face of each picture. inswapper draws the face at 128 x 128
 * px, so on its own a swapped face is blurred at any larger size; ReActor's README restores it
 * during the swap with one of its face restorers (`face_restore_model`), as its own examples do.
 */

/** insightface's swapper, in the folder ReActor lists it from (`models/insightface`). */
export const FACE_SWAP_MODEL = 'inswapper_128.onnx';

/**
 * The face restorer (folder `facerestore_models`): GFPGAN 1.4, the restorer ReActor's README lists
 * under a licence that allows commercial use (CodeFormer's does not), at full visibility.
 */
export const FACE_RESTORER = 'GFPGANv1.4.pth';

export const FACE_SWAP_NODES: readonly NodeClass[] = ['ReActorFaceSwap'];

export const FACE_SWAP_MODEL_NEEDS = [
  { folder: 'insightface', what: `\`${FACE_SWAP_MODEL}\`` },
  {
    folder: 'facerestore_models',
    what: `\`${FACE_RESTORER}\` (it restores the swapped face, which inswapper draws at 128 px). ReActor's node is missing from \`/object_info\` while this folder is empty: it then fetches four restorers from huggingface.co when the node is first listed, and a server that cannot reach it never lists the node`,
  },
  {
    folder: 'facedetection',
    what: 'the RetinaFace detector `detection_Resnet50_Final.pth` (ReActor fetches it on first use when the server can reach huggingface.co)',
  },
  {
    folder: 'nsfw_detector',
    what: '`vit-base-nsfw-detector/` (`config.json`, `model.safetensors`, `preprocessor_config.json` of AdamCodd/vit-base-nsfw-detector): ReActor classifies every picture with it before the swap and fetches it on first use; where the server cannot reach huggingface.co and the folder is empty, the swap fails',
  },
] as const;

export const FACE_RESTORE_NODES: readonly NodeClass[] = ['ReActorRestoreFace'];

/** What restoring faces needs: the GFPGAN restorer and the face detector ReActor finds faces with. */
export const FACE_RESTORE_NEEDS = [
  {
    folder: 'facerestore_models',
    what: `\`${FACE_RESTORER}\` for \`face_enhance\` (the GFPGAN Real-ESRGAN's face_enhance restores faces with)`,
  },
  FACE_SWAP_MODEL_NEEDS[2],
] as const;

/**
 * The faces of `picture` restored by GFPGAN, as Real-ESRGAN's `--face_enhance` restores them
 * (GFPGANer over the upscaled background): ReActor's RestoreFace finds each face with RetinaFace,
 * redraws it at 512 px and lays it back at full visibility.
 */
export function restoreFaces(w: Workflow, picture: Link<'IMAGE'>): Link<'IMAGE'> {
  return w
    .node('ReActorRestoreFace', {
      image: picture,
      facedetection: 'retinaface_resnet50',
      model: FACE_RESTORER,
      visibility: 1,
      codeformer_weight: 0.5,
    })
    .out(0);
}

/** `picture` with the face of `face` in place of its own. */
export function swapFace(w: Workflow, picture: Link<'IMAGE'>, face: Link<'IMAGE'>): Link<'IMAGE'> {
  return w
    .node('ReActorFaceSwap', {
      enabled: true,
      input_image: picture,
      source_image: face,
      swap_model: FACE_SWAP_MODEL,
      facedetection: 'retinaface_resnet50',
      face_restore_model: FACE_RESTORER,
      face_restore_visibility: 1,
      codeformer_weight: 0.5,
      detect_gender_input: 'no',
      detect_gender_source: 'no',
      input_faces_index: '0',
      source_faces_index: '0',
      console_log_level: 1,
    })
    .out(0);
}
