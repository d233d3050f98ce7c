import { stableDiffusionCompiler } from '../chains/stable-diffusion.ts';

/** `/sdxl/controlnet/v1`: SDXL text to image guided by controlnets. */
export const compiler = stableDiffusionCompiler('/sdxl/controlnet/v1', 'sdxl', 'controlnet');
