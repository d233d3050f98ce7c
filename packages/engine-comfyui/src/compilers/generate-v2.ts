import { stableDiffusionCompiler } from '../chains/stable-diffusion.ts';

/** `/generate/v2`: the one-call SDXL generator, SDXL text to image with nullable lists. */
export const compiler = stableDiffusionCompiler('/generate/v2', 'sdxl', 'text2image');
