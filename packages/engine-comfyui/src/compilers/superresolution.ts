import { FACE_RESTORE_NEEDS, FACE_RESTORE_NODES, restoreFaces } from '../chains/face-swap.ts';
import { inputSize } from '../chains/image-size.ts';
import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import { requestFields } from '../chains/request-fields.ts';
import { UPSCALE_MODELS, UPSCALE_NODES, type UpscaleModel, upscaleWith } from '../chains/upscaling.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { packNeeds } from '../node-packs.ts';
import { nodeClasses, SAVE_NODES, Workflow } from '../workflow/workflow.ts';

/**
 * `/superresolution/v1`: `init_image` through the named Real-ESRGAN model at its native scale,
 * then resized to exactly `scale_factor`. `tile` is not sent on: ComfyUI tiles by itself, as
 * memory allows, and the tile size does not change the picture. `face_enhance` then restores the
 * faces of the enlarged picture with GFPGAN, as Real-ESRGAN's own `--face_enhance` does
 * (chains/face-swap.ts).
 */
const PIPELINE = '/superresolution/v1';

const UPLOADED_UPSCALER = 'not an upscaler this engine knows (uploaded upscalers are not served)';

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(IMAGE_NODES.load, UPSCALE_NODES, FACE_RESTORE_NODES, SAVE_NODES),
    packs: packNeeds({ pack: 'ComfyUI-ReActor', when: 'only with `face_enhance: true`' }),
    models: [
      {
        folder: 'upscale_models',
        what: `the file of \`model_name\`: ${Object.entries(UPSCALE_MODELS)
          .map(([name, model]) => `\`${model.file}\` for \`${name}\``)
          .join(', ')}`,
      },
      ...FACE_RESTORE_NEEDS,
    ],
    refuses: [{ field: 'model_name', why: UPLOADED_UPSCALER }],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    const name = fields.string('model_name');
    const model: UpscaleModel | undefined = UPSCALE_MODELS[name as keyof typeof UPSCALE_MODELS];
    if (!model) {
      fields.refuse(
        'model_name',
        `'${name}' is ${UPLOADED_UPSCALER}; send one of ${Object.keys(UPSCALE_MODELS).join(', ')}`,
      );
    }
    const w = new Workflow(ctx.filenamePrefix);
    const enlarged = upscaleWith(
      w,
      loadImage(w, fields.image('init_image')),
      model,
      fields.number('scale_factor'),
      inputSize(ctx, 'init_image'),
    );
    w.save(fields.bool('face_enhance') ? restoreFaces(w, enlarged) : enlarged);
    return w.compiled();
  },
};
