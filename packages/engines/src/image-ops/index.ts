export { compositeOnBackground } from './composite-background.ts';
export { type InpaintMaskOptions, inpaintMaskFromCoords, seedPoints } from './inpaint-mask.ts';
export {
  type OutpaintCanvas,
  type OutpaintDirection,
  type OutpaintOptions,
  outpaintCanvas,
  type Rect,
  tilePlan,
} from './outpaint-canvas.ts';
