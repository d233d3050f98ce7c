import { stableDiffusionCompiler } from '../chains/stable-diffusion.ts';

/** `/sd/text2image/v1`: Stable Diffusion 1.5 text to image. */
export const compiler = stableDiffusionCompiler('/sd/text2image/v1', 'sd1.5', 'text2image');
