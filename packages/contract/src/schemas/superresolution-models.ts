/**
 * The named `model_name` members of `/superresolution/v1`. A module of its own because two sides
 * read it: the request schema (utilities.ts) lists them, and an engine maps each one to the
 * weights it runs (the cpu engine's model table).
 */
export const SUPERRESOLUTION_MODELS = [
  'RealESRGAN_x4plus',
  'RealESRGAN_x2plus',
  'realesr-general-x4v3',
] as const;
