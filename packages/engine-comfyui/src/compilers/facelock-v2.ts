import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  DEFAULT_CHECKPOINTS,
  type FamilyAdapters,
  familyRefusal,
  loadCheckpoint,
  otherFamilyRefusal,
  profileDecided,
  profileOf,
  refuseOtherFamily,
} from '../chains/model-files.ts';
import { settingsRefusal, settingsRefusals } from '../chains/model-settings.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import { drawRequested, LARGE_TEXT_TO_IMAGE_NODES } from '../chains/text-to-image.ts';
import type { AdmitContext, CompileContext, PipelineCompiler } from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/facelock/v2`: PuLID on an SDXL checkpoint with cubiq's PuLID_ComfyUI: the identity of
 * `input_face` (insightface antelopev2 and EVA-CLIP features) injected into the model at
 * `id_scale`, PuLID's fidelity mode, then text to image as usual.
 *
 * `supp_image1` is refused: PuLID concatenates the identity tokens of the extra face (all of them
 * with `id_mix`, the first five without), while ApplyPulid averages the faces of a batch, which is
 * another picture. `id_mix` without it mixes nothing, as in PuLID: noted. PuLID has no SD1.5 model: `/facelock/v1` runs IP-Adapter FaceID.
 */
const PIPELINE = '/facelock/v2';

/** PuLID's SDXL weights (folder `pulid`), as guozinan/PuLID publishes them. */
export const PULID_MODEL = 'ip-adapter_pulid_sdxl_fp16.safetensors';

const FACELOCK_NODES: readonly NodeClass[] = [
  'PulidModelLoader',
  'PulidInsightFaceLoader',
  'PulidEvaClipLoader',
  'ApplyPulid',
];

const NOT_CONCATENATED =
  "would add the extra face's identity tokens to input_face's, as PuLID does; ApplyPulid averages the faces instead, which is another picture";

const WRONG_FAMILY: FamilyAdapters = {
  family: 'sdxl',
  adapters: "PuLID's weights",
  instead: 'send an SDXL model here, or use /facelock/v1 (IP-Adapter FaceID for SD1.5)',
};

const REFUSED = { supp_image1: NOT_CONCATENATED };

/** The mix of faces without a second face: the original's pipeline takes no notice of it. */
const IGNORED = { id_mix: 'is only used with supp_image1, and none is sent, so it is not used' };

/** The profile of the model the face is locked onto: its own, else SDXL's. */
const modelProfile = (ctx: AdmitContext & Pick<CompileContext, 'models'>) =>
  profileOf(ctx, typeof ctx.input.model_id === 'string' ? ctx.input.model_id : '', 'sdxl');

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(
      CHECKPOINT_DIFFUSION_NODES,
      FACELOCK_NODES,
      IMAGE_NODES.load,
      LARGE_TEXT_TO_IMAGE_NODES,
    ),
    packs: packNeeds('PuLID_ComfyUI'),
    models: [
      {
        folder: 'checkpoints',
        what: `the SDXL checkpoint of \`model_id\`: \`${DEFAULT_CHECKPOINTS['sdxl']}\` for \`sdxl\`, or the file \`COMFYUI_CHECKPOINTS\` maps the id to`,
      },
      { folder: 'pulid', what: `\`${PULID_MODEL}\`` },
      {
        folder: 'insightface',
        what: '`models/antelopev2/` (the face analysis PuLID reads; EVA-CLIP is fetched on first use)',
      },
    ],
    refuses: [
      ...refusals(REFUSED),
      familyRefusal(WRONG_FAMILY.family, WRONG_FAMILY.adapters),
      // A distilled SDXL (SDXL-Lightning, SDXL-Turbo) samples with its own bounds.
      ...settingsRefusals('steps', 'cfg'),
    ],
    ignores: refusals(IGNORED),
  },
  // A model of the other family, or past a distilled model's bounds, is refused at submission
  // where the settings know its family.
  admit: (ctx) =>
    otherFamilyRefusal(ctx, WRONG_FAMILY) ??
    (profileDecided(ctx, String(ctx.input.model_id))
      ? settingsRefusal(modelProfile(ctx), requestFields(PIPELINE, ctx), ctx)
      : null),
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    fields.refuseUnlessDefault(REFUSED);
    refuseOtherFamily(fields, ctx, WRONG_FAMILY);
    const w = new Workflow(ctx.filenamePrefix);
    fields.ignoreUnlessDefault(w, IGNORED);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, fields.string('model_id'), 'sdxl'));
    const model = w
      .node('ApplyPulid', {
        model: checkpoint.model,
        pulid: w.node('PulidModelLoader', { pulid_file: PULID_MODEL }).out(0),
        eva_clip: w.node('PulidEvaClipLoader', {}).out(0),
        // Face analysis is light work: on the CPU it runs on every server, with or without CUDA.
        face_analysis: w.node('PulidInsightFaceLoader', { provider: 'CPU' }).out(0),
        image: loadImage(w, fields.image('input_face')),
        method: 'fidelity',
        weight: fields.number('id_scale'),
        start_at: 0,
        end_at: 1,
      })
      .out(0);
    drawRequested(w, fields, ctx, modelProfile(ctx), {
      model,
      vae: checkpoint.vae,
      ...encodePrompts(w, checkpoint.clip, fields.string('prompt'), fields.string('negative_prompt')),
    });
    return w.compiled();
  },
};
