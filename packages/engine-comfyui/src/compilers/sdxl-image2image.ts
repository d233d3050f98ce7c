import { stableDiffusionCompiler } from '../chains/stable-diffusion.ts';

/** `/sdxl/image2image/v1`: SDXL image to image. */
export const compiler = stableDiffusionCompiler('/sdxl/image2image/v1', 'sdxl', 'image2image');
