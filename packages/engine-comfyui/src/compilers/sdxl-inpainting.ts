import { stableDiffusionCompiler } from '../chains/stable-diffusion.ts';

/** `/sdxl/inpainting/v1`: SDXL inpainting. */
export const compiler = stableDiffusionCompiler('/sdxl/inpainting/v1', 'sdxl', 'inpainting');
