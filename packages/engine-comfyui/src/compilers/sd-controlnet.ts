import { stableDiffusionCompiler } from '../chains/stable-diffusion.ts';

/** `/sd/controlnet/v1`: Stable Diffusion 1.5 text to image guided by controlnets, one control picture per controlnet in `init_images`. */
export const compiler = stableDiffusionCompiler('/sd/controlnet/v1', 'sd1.5', 'controlnet');
