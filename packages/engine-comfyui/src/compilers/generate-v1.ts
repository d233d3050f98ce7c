import { stableDiffusionCompiler } from '../chains/stable-diffusion.ts';

/**
 * `/generate/v1`: the one-call SD1.5 generator. The SD1.5 text2image graph on the fields of its
 * page, with its `style` preset applied to the prompts (chains/prompt-styles.ts).
 */
export const compiler = stableDiffusionCompiler('/generate/v1', 'sd1.5', 'text2image', { presetStyle: true });
