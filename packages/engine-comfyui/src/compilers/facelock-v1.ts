import { IMAGE_NODES, loadImageBatch } from '../chains/input-images.ts';
import { IP_ADAPTER_FILES } from '../chains/ip-adapter.ts';
import {
  CHECKPOINT_DIFFUSION_NODES,
  checkpointFile,
  DEFAULT_CHECKPOINTS,
  type FamilyAdapters,
  familyRefusal,
  loadCheckpoint,
  otherFamilyRefusal,
  profileOf,
  refuseOtherFamily,
} from '../chains/model-files.ts';
import { encodePrompts } from '../chains/prompt-encoding.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import { drawRequested, LARGE_TEXT_TO_IMAGE_NODES } from '../chains/text-to-image.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/facelock/v1`: the identity of `input_face` on an SD1.5 checkpoint with IP-Adapter FaceID Plus
 * V2 (ComfyUI_IPAdapter_plus; PuLID, which `/facelock/v2` runs, has no SD1.5 model): insightface's
 * face embedding plus the CLIP image of the face, applied at `id_scale`, with the adapter's LoRA
 * at the strength the pack's own FaceID loader gives it, then text to image as usual.
 *
 * `supp_image1` with `id_mix` adds the second face's embedding to the first's (the pack's
 * `concat`, as PuLID concatenates identity tokens with `id_mix`). Without `id_mix`, PuLID adds only
 * the first five tokens of the second face, which FaceID has no counterpart for: refused. `id_mix`
 * without a second face mixes nothing, as in PuLID: noted.
 */
const PIPELINE = '/facelock/v1';

/** h94/IP-Adapter-FaceID's SD1.5 Plus V2 weights and its LoRA (folders `ipadapter`, `loras`). */
export const FACEID_FILES = {
  adapter: 'ip-adapter-faceid-plusv2_sd15.bin',
  lora: 'ip-adapter-faceid-plusv2_sd15_lora.safetensors',
  clipVision: IP_ADAPTER_FILES['ip-adapter-plus_sd15']!.clipVision,
} as const;

/** The LoRA strength IPAdapterUnifiedLoaderFaceID applies for FaceID Plus V2 by default. */
const FACEID_LORA_STRENGTH = 0.6;

const FACEID_NODES: readonly NodeClass[] = [
  'IPAdapterModelLoader',
  'CLIPVisionLoader',
  'IPAdapterInsightFaceLoader',
  'LoraLoaderModelOnly',
  'IPAdapterFaceID',
];

const WRONG_FAMILY: FamilyAdapters = {
  family: 'sd',
  adapters: 'IP-Adapter FaceID Plus V2 and its LoRA',
  instead: 'send an SD1.5 model here, or use /facelock/v2 (PuLID for SDXL)',
};

const REFUSED = {
  supp_image1:
    "without id_mix: PuLID adds only the first five identity tokens of the extra face, which IP-Adapter FaceID has no counterpart for (with id_mix: true both faces' embeddings are concatenated)",
};

/** What the original's pipeline takes no notice of: the mix of faces without a second face. */
const IGNORED = { id_mix: 'is only used with supp_image1, and none is sent, so it is not used' };

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(
      CHECKPOINT_DIFFUSION_NODES,
      FACEID_NODES,
      IMAGE_NODES.batch,
      LARGE_TEXT_TO_IMAGE_NODES,
    ),
    packs: packNeeds('ComfyUI_IPAdapter_plus'),
    models: [
      {
        folder: 'checkpoints',
        what: `the SD1.5 checkpoint of \`model_id\`: \`${DEFAULT_CHECKPOINTS['sd1.5']}\` for \`sd1.5\`, or the file \`COMFYUI_CHECKPOINTS\` maps the id to`,
      },
      { folder: 'ipadapter', what: `\`${FACEID_FILES.adapter}\`` },
      { folder: 'loras', what: `\`${FACEID_FILES.lora}\`` },
      { folder: 'clip_vision', what: `\`${FACEID_FILES.clipVision}\`` },
      { folder: 'insightface', what: '`models/buffalo_l/` (the face analysis FaceID reads)' },
    ],
    refuses: [...refusals(REFUSED), familyRefusal(WRONG_FAMILY.family, WRONG_FAMILY.adapters)],
    ignores: refusals(IGNORED),
  },
  // A model of the other family is refused at submission where its family is known.
  admit: (ctx) => otherFamilyRefusal(ctx, WRONG_FAMILY),
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    refuseOtherFamily(fields, ctx, WRONG_FAMILY);
    const mixed = fields.has('supp_image1');
    if (mixed && !fields.bool('id_mix')) fields.refuse('supp_image1', REFUSED.supp_image1);
    const w = new Workflow(ctx.filenamePrefix);
    if (!mixed) fields.ignoreUnlessDefault(w, IGNORED);
    const checkpoint = loadCheckpoint(w, checkpointFile(ctx, fields.string('model_id'), 'sd1.5'));
    const faces = loadImageBatch(w, [
      fields.image('input_face'),
      ...(mixed ? [fields.image('supp_image1')] : []),
    ]);
    const withLora = w
      .node('LoraLoaderModelOnly', {
        model: checkpoint.model,
        lora_name: FACEID_FILES.lora,
        strength_model: FACEID_LORA_STRENGTH,
      })
      .out(0);
    const [model] = w.node('IPAdapterFaceID', {
      model: withLora,
      ipadapter: w.node('IPAdapterModelLoader', { ipadapter_file: FACEID_FILES.adapter }).out(0),
      clip_vision: w.node('CLIPVisionLoader', { clip_name: FACEID_FILES.clipVision }).out(0),
      // Face analysis is light work: on the CPU it runs on every server, with or without CUDA.
      insightface: w.node('IPAdapterInsightFaceLoader', { model_name: 'buffalo_l', provider: 'CPU' }).out(0),
      image: faces,
      weight: fields.number('id_scale'),
      weight_faceidv2: 1,
      weight_type: 'linear',
      combine_embeds: 'concat',
      start_at: 0,
      end_at: 1,
      embeds_scaling: 'V only',
    }).outputs;
    drawRequested(w, fields, ctx, profileOf(ctx, fields.string('model_id'), 'sd1.5'), {
      model,
      vae: checkpoint.vae,
      ...encodePrompts(w, checkpoint.clip, fields.string('prompt'), fields.string('negative_prompt')),
    });
    return w.compiled();
  },
};
