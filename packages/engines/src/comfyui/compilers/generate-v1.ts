import { stableDiffusionCompiler } from '../chains/stable-diffusion.ts';

/** `/generate/v1`: Generate v1: SDXL text to image with its own defaults (4 samples, 30 steps, clip_skip 2) and nullable lists. */
export const compiler = stableDiffusionCompiler('/generate/v1', 'sdxl', 'text2image');
