import type { CompiledWorkflow, PromptProgress } from './contracts.ts';

/**
 * A task's progress from ComfyUI's `progress` messages: steps done over the steps of every
 * sampling pass (a hires fix or an upscale pass adds its own), so the bar crosses each pass once
 * and never goes back. Progress from other nodes (an upscale model's tiles) is not sampling and
 * moves nothing.
 */
export function samplingProgress(
  steps: CompiledWorkflow['samplingSteps'],
  report: (fraction: number, message: string) => void,
): (progress: PromptProgress) => void {
  const total = steps.reduce((sum, pass) => sum + pass.steps, 0);
  const before = new Map<string, { done: number; steps: number; pass: number }>();
  let done = 0;
  for (const [pass, sampler] of steps.entries()) {
    before.set(sampler.node, { done, steps: sampler.steps, pass: pass + 1 });
    done += sampler.steps;
  }
  let best = 0;
  return ({ node, value, max }) => {
    const sampler = before.get(node);
    if (!sampler || total === 0 || max <= 0) return;
    const now = sampler.done + Math.round(Math.min(1, Math.max(0, value / max)) * sampler.steps);
    if (now <= best) return;
    best = now;
    const passes = steps.length > 1 ? ` (pass ${sampler.pass} of ${steps.length})` : '';
    report(now / total, `step ${now} of ${total}${passes}`);
  };
}
