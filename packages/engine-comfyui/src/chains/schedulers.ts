/**
 * The contract's schedulers (diffusers class names) as ComfyUI sampler and scheduler names: the
 * nearest pair for each, as other ComfyUI gateways map them. Pictures will not match diffusers bit
 * for bit (ComfyUI draws its noise on the CPU from the seed).
 */
export interface Sampling {
  readonly sampler_name: string;
  readonly scheduler: string;
}

export const SCHEDULER_SAMPLING: Readonly<Record<string, Sampling>> = {
  EulerDiscreteScheduler: { sampler_name: 'euler', scheduler: 'normal' },
  EulerAncestralDiscreteScheduler: { sampler_name: 'euler_ancestral', scheduler: 'normal' },
  HeunDiscreteScheduler: { sampler_name: 'heun', scheduler: 'normal' },
  // diffusers uses Karras sigmas only when asked to (use_karras_sigmas), which the contract cannot ask.
  DPMSolverMultistepScheduler: { sampler_name: 'dpmpp_2m', scheduler: 'normal' },
  DPMSolverMultistepSchedulerSDE: { sampler_name: 'dpmpp_2m_sde', scheduler: 'normal' },
  KDPM2DiscreteScheduler: { sampler_name: 'dpm_2', scheduler: 'normal' },
  DDIMScheduler: { sampler_name: 'ddim', scheduler: 'ddim_uniform' },
  DDPMScheduler: { sampler_name: 'ddpm', scheduler: 'normal' },
  UniPCMultistepScheduler: { sampler_name: 'uni_pc_bh2', scheduler: 'normal' },
  DEISMultistepScheduler: { sampler_name: 'deis', scheduler: 'normal' },
  // ComfyUI has no PNDM; improved PNDM is the nearest multistep sampler it has.
  PNDMScheduler: { sampler_name: 'ipndm', scheduler: 'normal' },
  LCMScheduler: { sampler_name: 'lcm', scheduler: 'sgm_uniform' },
};

/** The sampling of a contract scheduler name (the contract allows only the twelve above). */
export function samplingFor(scheduler: string): Sampling {
  const sampling = SCHEDULER_SAMPLING[scheduler];
  if (!sampling) throw new Error(`no ComfyUI sampling for scheduler ${scheduler}`);
  return sampling;
}
