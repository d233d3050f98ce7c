import { stableDiffusionCompiler } from '../chains/stable-diffusion.ts';

/** `/sd/image2image/v1`: Stable Diffusion 1.5 image to image: `init_image` scaled to the requested size, encoded, sampled at `strength`. */
export const compiler = stableDiffusionCompiler('/sd/image2image/v1', 'sd1.5', 'image2image');
