import { sd3Compiler } from '../chains/sd3.ts';

/** `/sd3/v1`: Stable Diffusion 3 (medium). */
export const compiler = sd3Compiler('/sd3/v1', 'sd3');
