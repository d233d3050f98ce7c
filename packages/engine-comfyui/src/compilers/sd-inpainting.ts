import { stableDiffusionCompiler } from '../chains/stable-diffusion.ts';

/** `/sd/inpainting/v1`: Stable Diffusion 1.5 inpainting: the white part of `mask_image` repainted. */
export const compiler = stableDiffusionCompiler('/sd/inpainting/v1', 'sd1.5', 'inpainting');
