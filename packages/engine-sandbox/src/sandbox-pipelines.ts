import { endpoints } from '@imagegen/contract';

/** image2prompt describes an image rather than drawing one: a placeholder picture would lie. */
const DESCRIBING_PIPELINES = new Set(['/image2prompt/v1']);

/** Every generation pipeline of the contract that draws images: the sandbox draws placeholders. */
export function drawingPipelines(): string[] {
  return endpoints
    .filter((endpoint) => endpoint.kind === 'generation' && !DESCRIBING_PIPELINES.has(endpoint.path))
    .map((endpoint) => endpoint.path);
}

/** Training on the sandbox engine answers a model marked as a sandbox model (no weights trained). */
export const SANDBOX_TRAINING_PIPELINE = '/train_model/v1';

/** The pipelines the sandbox engine serves: placeholder images, and a sandbox model for training. */
export function sandboxPipelines(): string[] {
  return [...drawingPipelines(), SANDBOX_TRAINING_PIPELINE];
}
