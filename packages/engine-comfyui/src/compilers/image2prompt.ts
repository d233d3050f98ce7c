import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import { requestFields } from '../chains/request-fields.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import { nodeClasses, SHOW_NODES, Workflow } from '../workflow/workflow.ts';

/**
 * `/image2prompt/v1`: a caption of `input_image` in words a prompt would use, by Florence-2 large
 * (kijai's ComfyUI-Florence2, its `more_detailed_caption` task, beam search as Microsoft's example
 * runs it). The caption reaches the history through core PreviewAny, whose text is the task's
 * `prompt`.
 */
const PIPELINE = '/image2prompt/v1';

/** The Florence-2 weights the node downloads into `models/LLM` on first use (or finds there). */
const FLORENCE2_MODEL = 'microsoft/Florence-2-large';

const CAPTION_NODES: readonly NodeClass[] = ['DownloadAndLoadFlorence2Model', 'Florence2Run'];

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(IMAGE_NODES.load, CAPTION_NODES, SHOW_NODES),
    packs: packNeeds('ComfyUI-Florence2'),
    models: [
      {
        folder: 'LLM',
        what: `\`Florence-2-large/\` (\`${FLORENCE2_MODEL}\`; the node fetches it on first use when the server can reach huggingface.co)`,
      },
    ],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const w = new Workflow(ctx.filenamePrefix);
    const florence2_model = w
      .node('DownloadAndLoadFlorence2Model', {
        model: FLORENCE2_MODEL,
        // fp32 runs on CPU and GPU servers alike; the caption is the same.
        precision: 'fp32',
        attention: 'sdpa',
      })
      .out(0);
    const [, , caption] = w.node('Florence2Run', {
      image: loadImage(w, fields.image('input_image')),
      florence2_model,
      text_input: '',
      task: 'more_detailed_caption',
      fill_mask: false,
      max_new_tokens: 1024,
      num_beams: 3,
      do_sample: false,
    }).outputs;
    w.show(caption);
    return w.compiled();
  },
};
