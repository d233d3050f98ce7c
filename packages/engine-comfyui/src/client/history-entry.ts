import type { FileRef } from '../contracts.ts';

/**
 * One `/history/{id}` entry read into the prompt's outcome. ComfyUI writes the entry when the
 * prompt ends; failed and interrupted prompts both read `status_str: "error"`, and the last
 * `execution_error` / `execution_interrupted` message of `status.messages` tells them apart.
 */

export interface HistoryEntry {
  readonly outputs?: Readonly<
    Record<string, { readonly images?: readonly FileRef[]; readonly text?: readonly string[] }>
  >;
  readonly status?: {
    readonly status_str?: string;
    readonly completed?: boolean;
    readonly messages?: readonly (readonly [string, Readonly<Record<string, unknown>>])[];
  };
}

export type PromptOutcome =
  /** `texts` only where an output node showed text (PreviewAny's `{"text": [value]}`). */
  | { readonly kind: 'success'; readonly files: FileRef[]; readonly texts?: string[] }
  | { readonly kind: 'failed'; readonly message: string; readonly outOfMemory?: boolean };

export function readHistoryEntry(
  entry: HistoryEntry,
  outputNodes: readonly string[],
  server: string,
): PromptOutcome {
  const status = entry.status;
  if (status?.status_str === 'error' || status?.completed === false) {
    const messages = status.messages ?? [];
    const failure = lastFailure(messages);
    return {
      kind: 'failed',
      message: describeFailure(messages, server),
      ...(failure && isOutOfMemory(failure) ? { outOfMemory: true } : {}),
    };
  }
  const files: FileRef[] = [];
  const texts: string[] = [];
  for (const node of outputNodes) {
    const output = entry.outputs?.[node];
    const images = (output?.images ?? []).filter((image) => image.type === 'output');
    if (images.length === 0 && output?.text !== undefined) {
      texts.push(...output.text.map(String));
      continue;
    }
    if (images.length === 0) {
      return { kind: 'failed', message: `output node ${node} saved no image on server ${server}` };
    }
    files.push(...images.map(({ filename, subfolder, type }) => ({ filename, subfolder, type })));
  }
  return { kind: 'success', files, ...(texts.length > 0 ? { texts } : {}) };
}

type StatusMessage = readonly [string, Readonly<Record<string, unknown>>];

/** The failure in words: the failing node's type and id, and the exception's own message. */
export function describeFailure(messages: readonly StatusMessage[], server: string): string {
  const failure = lastFailure(messages);
  if (!failure) return `the prompt failed on server ${server} without saying why`;
  const [event, data] = failure;
  const node = `${String(data.node_type ?? 'node')} (node ${String(data.node_id ?? '?')})`;
  if (event === 'execution_interrupted') return `${node} was interrupted on server ${server}`;
  const type = data.exception_type ? `${String(data.exception_type)}: ` : '';
  if (isOutOfMemory(failure)) {
    // The allocator's figures and ComfyUI's tips follow the first line: the line says it all.
    const first = String(data.exception_message ?? '')
      .split('\n')[0]!
      .trim();
    return `${node} ran out of memory on server ${server}: ${type}${first}`;
  }
  const exception = String(data.exception_message ?? '').trim();
  return `${node} failed on server ${server}: ${type}${exception || 'no message'}`;
}

/** The last `execution_error` or `execution_interrupted` of a prompt's messages. */
function lastFailure(messages: readonly StatusMessage[]): StatusMessage | undefined {
  for (let at = messages.length - 1; at >= 0; at--) {
    const event = messages[at]![0];
    if (event === 'execution_error' || event === 'execution_interrupted') return messages[at];
  }
  return undefined;
}

/**
 * The exception types ComfyUI reports for `torch.cuda.OutOfMemoryError` (`execution.py`'s
 * `full_type_name`): PyTorch 2.5 and later define it as `torch.OutOfMemoryError`.
 */
const OUT_OF_MEMORY_TYPES = new Set(['torch.OutOfMemoryError', 'torch.cuda.OutOfMemoryError']);

/**
 * The words of an allocation that failed: ComfyUI's own tip for an out-of-memory, PyTorch's CUDA
 * allocators (native and cudaMallocAsync), ROCm's and Apple's, and the CPU allocator's (a CPU
 * server runs out of RAM as a RuntimeError).
 */
const OUT_OF_MEMORY_WORDS =
  /This error means you ran out of memory on your GPU|CUDA out of memory|HIP out of memory|MPS backend out of memory|Allocation on device \d+ would exceed allowed memory|DefaultCPUAllocator: (?:can't allocate memory|not enough memory)/;

/** Whether a failure is the server running out of memory rather than the graph's own fault. */
export function isOutOfMemory([event, data]: StatusMessage): boolean {
  if (event !== 'execution_error') return false;
  return (
    OUT_OF_MEMORY_TYPES.has(String(data.exception_type)) ||
    OUT_OF_MEMORY_WORDS.test(String(data.exception_message ?? ''))
  );
}
