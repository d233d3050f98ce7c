import { stableDiffusionCompiler } from '../chains/stable-diffusion.ts';

/** `/sdxl/text2image/v1`: SDXL text to image. */
export const compiler = stableDiffusionCompiler('/sdxl/text2image/v1', 'sdxl', 'text2image');
