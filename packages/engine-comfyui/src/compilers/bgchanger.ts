import { inputSize } from '../chains/image-size.ts';
import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import { applyStyle, IP_ADAPTER_FILES, loadIpAdapter } from '../chains/ip-adapter.ts';
import { REPAINT_MODEL_NEED, REPAINT_NODES, repaint } from '../chains/repaint.ts';
import { requestFields } from '../chains/request-fields.ts';
import { SUBJECT_MASK_NODES, SUBJECT_MODEL_NEED, subjectMask } from '../chains/subject-mask.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, Workflow } from '../workflow/workflow.ts';

/**
 * `/bgchanger/v1`: the subject of `init_image` kept pixel for pixel on a new background. The
 * subject is cut out with RMBG-2.0 (ComfyUI-RMBG), everything else repainted on SDXL from the
 * prompt, and the subject laid back over it. `style_image` steers the new background's style
 * through IP-Adapter (InstantStyle's style-only weighting), so the subject is not changed by it.
 *
 * IC-Light's background-conditioned model was the other route: it takes a background picture and
 * relights the subject to match, so the subject's own pixels change and there is no place for a
 * style picture; the request asks for a described background around the same subject.
 */
const PIPELINE = '/bgchanger/v1';

/** The adapter a style picture goes through: SDXL's base IP-Adapter, as InstantStyle uses it. */
const STYLE_ADAPTER = IP_ADAPTER_FILES['ip-adapter_sdxl']!;

/** diffusers' IP-Adapter scale when none is set. */
const STYLE_WEIGHT = 1;

const SUBJECT_NODES: readonly NodeClass[] = [...SUBJECT_MASK_NODES, 'InvertMask'];
const STYLE_NODES: readonly NodeClass[] = ['IPAdapterModelLoader', 'CLIPVisionLoader', 'IPAdapterAdvanced'];

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(IMAGE_NODES.load, SUBJECT_NODES, REPAINT_NODES, STYLE_NODES),
    packs: packNeeds('ComfyUI-RMBG', { pack: 'ComfyUI_IPAdapter_plus', when: 'only with `style_image`' }),
    models: [
      REPAINT_MODEL_NEED,
      SUBJECT_MODEL_NEED,
      { folder: 'ipadapter', what: `\`${STYLE_ADAPTER.file}\` (with \`style_image\`)` },
      { folder: 'clip_vision', what: `\`${STYLE_ADAPTER.clipVision}\` (with \`style_image\`)` },
    ],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    const picture = loadImage(w, fields.image('init_image'));
    const subject = subjectMask(w, picture);
    const style = fields.has('style_image') ? fields.image('style_image') : undefined;
    const painted = repaint(w, ctx, {
      picture,
      pictureSize: inputSize(ctx, 'init_image'),
      mask: w.node('InvertMask', { mask: subject }).out(0),
      prompt: fields.string('prompt'),
      negativePrompt: fields.string('negative_prompt'),
      ...(style
        ? {
            adapt: (model) =>
              applyStyle(w, model, loadIpAdapter(w, STYLE_ADAPTER), loadImage(w, style), STYLE_WEIGHT),
          }
        : {}),
    });
    w.save(painted);
    return w.compiled();
  },
};
