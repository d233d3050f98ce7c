/**
 * The named `model_name` members of `/superresolution/v1`. A module of its own because two sides
 * read it: the request schema (utilities.ts) lists them, and the cpu engine notes
 * (engine-notes.ts) map each one to shipped weights; the schemas quote those notes, so the names
 * must sit below both for the imports to go one way.
 */
export const SUPERRESOLUTION_MODELS = [
  'RealESRGAN_x4plus',
  'RealESRGAN_x2plus',
  'realesr-general-x4v3',
] as const;
