import type { CompiledWorkflow, PromptProgress } from './contracts.ts';

/** What a running prompt tells the task's progress bar (the client's `onProgress` and `onNodeStart`). */
export interface ProgressFollower {
  onProgress(progress: PromptProgress): void;
  onNodeStart(node: string): void;
}

/**
 * A task's progress from ComfyUI's `progress` messages: steps done over the steps of every
 * sampling pass (a hires fix or an upscale pass adds its own; training counts its steps as one),
 * so the bar crosses each pass once and never goes back. Progress from other nodes (an upscale
 * model's tiles) is not sampling and moves nothing. The start of the workflow's `runningFrom`
 * node reports the steps done before it (0 for training), once, as nothing else may until it ends.
 */
export function samplingProgress(
  workflow: Pick<CompiledWorkflow, 'samplingSteps' | 'runningFrom'>,
  report: (fraction: number, message: string) => void,
): ProgressFollower {
  const steps = workflow.samplingSteps;
  const total = steps.reduce((sum, pass) => sum + pass.steps, 0);
  const before = new Map<string, { done: number; steps: number; pass: number }>();
  let done = 0;
  for (const [pass, sampler] of steps.entries()) {
    before.set(sampler.node, { done, steps: sampler.steps, pass: pass + 1 });
    done += sampler.steps;
  }
  let best = 0;
  let reported = false;
  const tell = (now: number, pass: number) => {
    best = now;
    reported = true;
    const passes = steps.length > 1 ? ` (pass ${pass} of ${steps.length})` : '';
    report(now / total, `step ${now} of ${total}${passes}`);
  };
  return {
    onProgress: ({ node, value, max }) => {
      const sampler = before.get(node);
      if (!sampler || total === 0 || max <= 0) return;
      const now = sampler.done + Math.round(Math.min(1, Math.max(0, value / max)) * sampler.steps);
      if (now > best) tell(now, sampler.pass);
    },
    onNodeStart: (node) => {
      const sampler = before.get(node);
      if (node !== workflow.runningFrom || !sampler || total === 0) return;
      if (sampler.done > best || !reported) tell(sampler.done, sampler.pass);
    },
  };
}
