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
  | { readonly kind: 'failed'; readonly message: string };

export function readHistoryEntry(
  entry: HistoryEntry,
  outputNodes: readonly string[],
  server: string,
): PromptOutcome {
  const status = entry.status;
  if (status?.status_str === 'error' || status?.completed === false) {
    return { kind: 'failed', message: describeFailure(status.messages ?? [], server) };
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

/** The failure in words: the failing node's type and id, and the exception's own message. */
export function describeFailure(
  messages: readonly (readonly [string, Readonly<Record<string, unknown>>])[],
  server: string,
): string {
  for (let at = messages.length - 1; at >= 0; at--) {
    const [event, data] = messages[at]!;
    const node = `${String(data.node_type ?? 'node')} (node ${String(data.node_id ?? '?')})`;
    if (event === 'execution_error') {
      const exception = String(data.exception_message ?? '').trim();
      const type = data.exception_type ? `${String(data.exception_type)}: ` : '';
      return `${node} failed on server ${server}: ${type}${exception || 'no message'}`;
    }
    if (event === 'execution_interrupted') return `${node} was interrupted on server ${server}`;
  }
  return `the prompt failed on server ${server} without saying why`;
}
