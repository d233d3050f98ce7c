import type { EngineResult } from '@imagegen/engines';

/**
 * What a finished task's usage record says beyond what its task row holds (times, owner,
 * pipeline, outcome): which engine, server and model ran it, and what it produced.
 */
export interface UsageFacts {
  readonly engine: string | null;
  /** The ComfyUI server that ran it, when a comfyui engine did. */
  readonly server: string | null;
  readonly model: string | null;
  readonly images: number;
  /** Width × height summed over its images. */
  readonly pixels: number;
}

/** A record's facts when none are known: no engine ran, nothing was produced. */
export const NOTHING_KNOWN: UsageFacts = { engine: null, server: null, model: null, images: 0, pixels: 0 };

/** What an attempt's outputs add up to (run-task.ts reads them off the engine's result). */
export function outputTotals(output: Pick<EngineResult, 'images'>): Pick<UsageFacts, 'images' | 'pixels'> {
  let pixels = 0;
  for (const image of output.images) pixels += image.width * image.height;
  return { images: output.images.length, pixels };
}

/**
 * The facts of a task that succeeded: the engine and server from what the run recorded in its
 * meta, the model from the checkpoint the engine loaded or else the one the request named.
 */
export function successFacts(
  input: Readonly<Record<string, unknown>>,
  meta: Readonly<Record<string, unknown>> | undefined,
  totals: Pick<UsageFacts, 'images' | 'pixels'>,
): UsageFacts {
  return {
    engine: text(meta?.engine),
    server: text(meta?.comfyui_server),
    model: text(meta?.checkpoint) ?? text(input.model_id) ?? text(input.model_name),
    ...totals,
  };
}

/** The facts of a task that failed: no outputs count; the engine when one was running it. */
export function failureFacts(input: Readonly<Record<string, unknown>>, engine: string | null): UsageFacts {
  return {
    engine,
    server: null,
    model: text(input.model_id) ?? text(input.model_name),
    images: 0,
    pixels: 0,
  };
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
