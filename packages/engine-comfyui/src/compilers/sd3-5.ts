import { sd3Compiler } from '../chains/sd3.ts';

/** `/sd3_5/v1`: Stable Diffusion 3.5 (large). */
export const compiler = sd3Compiler('/sd3_5/v1', 'sd3.5');
