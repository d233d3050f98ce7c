import type { Pipeline } from '@imagegen/engines';
import type { PipelineCompiler } from '../contracts.ts';
import { compiler as bgchanger } from './bgchanger.ts';
import { compiler as facelockV1 } from './facelock-v1.ts';
import { compiler as facelockV2 } from './facelock-v2.ts';
import { compiler as faceswap } from './faceswap.ts';
import { fashionDress, fashionLower, fashionUpper } from './fashion.ts';
import { compiler as generateV1 } from './generate-v1.ts';
import { compiler as generateV2 } from './generate-v2.ts';
import { compiler as generateV3 } from './generate-v3.ts';
import { compiler as image2prompt } from './image2prompt.ts';
import { compiler as inpaintAnything } from './inpaint-anything.ts';
import { compiler as instamodel } from './instamodel.ts';
import { compiler as logo } from './logo.ts';
import { compiler as modelswitch } from './modelswitch.ts';
import { compiler as outpainting } from './outpainting.ts';
import { compiler as photomaker } from './photomaker.ts';
import { compiler as relight } from './relight.ts';
import { compiler as sdControlnet } from './sd-controlnet.ts';
import { compiler as sdImage2Image } from './sd-image2image.ts';
import { compiler as sdInpainting } from './sd-inpainting.ts';
import { compiler as sdText2Image } from './sd-text2image.ts';
import { compiler as sd3 } from './sd3.ts';
import { compiler as sd35 } from './sd3-5.ts';
import { compiler as sdxlControlnet } from './sdxl-controlnet.ts';
import { compiler as sdxlImage2Image } from './sdxl-image2image.ts';
import { compiler as sdxlInpainting } from './sdxl-inpainting.ts';
import { compiler as sdxlText2Image } from './sdxl-text2image.ts';
import { compiler as superresolution } from './superresolution.ts';
import { compiler as trainModel } from './train-model.ts';
import { compiler as upscaler } from './upscaler.ts';

/**
 * Every pipeline the comfyui engine compiles to a ComfyUI graph: the pipelines it serves (training
 * only where COMFYUI_MODELS_DIR lets it store the LoRA).
 */
export const COMPILERS: readonly PipelineCompiler[] = [
  sdText2Image,
  sdImage2Image,
  sdInpainting,
  sdControlnet,
  sdxlText2Image,
  sdxlImage2Image,
  sdxlInpainting,
  sdxlControlnet,
  generateV1,
  generateV2,
  generateV3,
  sd3,
  sd35,
  outpainting,
  upscaler,
  superresolution,
  faceswap,
  facelockV1,
  facelockV2,
  instamodel,
  photomaker,
  relight,
  image2prompt,
  bgchanger,
  logo,
  fashionUpper,
  fashionLower,
  fashionDress,
  modelswitch,
  inpaintAnything,
  trainModel,
];

const byPipeline = new Map(COMPILERS.map((compiler) => [compiler.pipeline, compiler]));

/** The compiler of a pipeline, or undefined when the comfyui engine does not serve it. */
export function compilerFor(pipeline: Pipeline): PipelineCompiler | undefined {
  return byPipeline.get(pipeline);
}

/** The pipelines the comfyui engine serves. */
export const COMFYUI_PIPELINES: readonly Pipeline[] = COMPILERS.map((compiler) => compiler.pipeline);
