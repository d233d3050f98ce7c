import { IMAGE_NODES, loadImage } from '../chains/input-images.ts';
import { refusals, requestFields } from '../chains/request-fields.ts';
import { UPSCALE_MODELS, UPSCALE_NODES, type UpscaleModel, upscaleWith } from '../chains/upscaling.ts';
import type { PipelineCompiler } from '../contracts.ts';
import { nodeClasses, SAVE_NODES, Workflow } from '../workflow/workflow.ts';

/**
 * `/superresolution/v1`: `init_image` through the named Real-ESRGAN model at its native scale,
 * then resized to exactly `scale_factor`. `tile` is not sent on: ComfyUI tiles by itself, as
 * memory allows, and the tile size does not change the picture.
 */
const PIPELINE = '/superresolution/v1';

const UPLOADED_UPSCALER = 'not an upscaler this engine knows (uploaded upscalers are not served)';

const NOT_SERVED = {
  face_enhance: 'needs a face-restoration model from a ComfyUI node pack, which this engine does not use yet',
};

export const compiler: PipelineCompiler = {
  pipeline: PIPELINE,
  requires: {
    nodes: nodeClasses(IMAGE_NODES.load, UPSCALE_NODES, SAVE_NODES),
    models: [
      {
        folder: 'upscale_models',
        what: `the file of \`model_name\`: ${Object.entries(UPSCALE_MODELS)
          .map(([name, model]) => `\`${model.file}\` for \`${name}\``)
          .join(', ')}`,
      },
    ],
    refuses: [...refusals(NOT_SERVED), { field: 'model_name', why: UPLOADED_UPSCALER }],
  },
  compile(ctx) {
    const fields = requestFields(PIPELINE, ctx);
    fields.refuseUnlessDefault(NOT_SERVED);
    const name = fields.string('model_name');
    const model: UpscaleModel | undefined = UPSCALE_MODELS[name as keyof typeof UPSCALE_MODELS];
    if (!model) {
      fields.refuse(
        'model_name',
        `'${name}' is ${UPLOADED_UPSCALER}; send one of ${Object.keys(UPSCALE_MODELS).join(', ')}`,
      );
    }
    const w = new Workflow(ctx.filenamePrefix);
    w.save(upscaleWith(w, loadImage(w, fields.image('init_image')), model, fields.number('scale_factor')));
    return w.compiled();
  },
};
