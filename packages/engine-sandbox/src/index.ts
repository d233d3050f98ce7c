/**
 * `@imagegen/engine-sandbox`: labelled placeholder images for every drawing pipeline, and a
 * labelled sandbox model for training, for integration work without a GPU (README.md). This entry
 * is the engine's module: importing it loads none of the engine, which is
 * `@imagegen/engine-sandbox/engine`, imported when the engine is built.
 */
import type { EngineModule } from '@imagegen/engines';

/** The sandbox engine as the program that starts the roles sees it: always there unless left out. */
export const sandboxEngineModule: EngineModule = {
  name: 'sandbox',
  real: false,
  async catalogue() {
    const { sandboxPipelines } = await import('./sandbox-pipelines.ts');
    return { pipelines: sandboxPipelines() };
  },
  enabledByDefault: () => true,
  async build({ env }) {
    const delayMs = sandboxDelayMs(env.SANDBOX_DELAY_MS);
    const { createSandboxEngine } = await import('./sandbox-engine.ts');
    return { engine: createSandboxEngine({ delayMs }) };
  },
};

/**
 * SANDBOX_DELAY_MS: simulated work per sandbox task (default 0), so that a deployment can be
 * rehearsed with tasks that take time: draining on SIGTERM, several workers sharing a queue.
 */
function sandboxDelayMs(value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`SANDBOX_DELAY_MS=${value} is not a whole number of milliseconds`);
  return n;
}
