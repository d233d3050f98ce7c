import type { Link } from '../workflow/graph.ts';
import type { NodeClass } from '../workflow/node-types.ts';
import type { Workflow } from '../workflow/workflow.ts';
import type { Family } from './controlnet-stack.ts';
import type { Size } from './image-size.ts';

/**
 * `hidiffusion`: HiDiffusion's two patches of the UNet (RAU-Net and MSW-MSA attention), as
 * diffusers' `apply_hidiffusion` applies both, with comfyui_jankhidiffusion's nodes. Its
 * resolution mode follows the size asked for.
 */
export const HIDIFFUSION_NODES: readonly NodeClass[] = ['ApplyRAUNetSimple', 'ApplyMSWMSAAttentionSimple'];

export function applyHidiffusion(
  w: Workflow,
  family: Family,
  model: Link<'MODEL'>,
  size: Size,
): Link<'MODEL'> {
  const model_type = family === 'sd' ? 'SD15' : 'SDXL';
  const side = Math.max(size.width, size.height);
  const res_mode =
    side > 2048 ? 'ultra (over 2048)' : side > 1024 ? 'high (1536-2048)' : 'low (1024 or lower)';
  const patched = w
    .node('ApplyRAUNetSimple', {
      model,
      model_type,
      res_mode,
      upscale_mode: 'default',
      ca_upscale_mode: 'default',
    })
    .out(0);
  return w.node('ApplyMSWMSAAttentionSimple', { model: patched, model_type }).out(0);
}
