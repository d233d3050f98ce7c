/**
 * A recorded exchange: one real request to a task endpoint and what the API answered, in order,
 * as `npm run --silent docs:examples` recorded it from the product (examples/record-exchanges.ts)
 * into examples/recorded/<slug>.json. What changes from run to run (ids, hosts, file keys,
 * timings) is written as a placeholder in angle brackets, so a new recording of the same
 * behaviour is the same file.
 */

/** When an answer was taken, in the order a task goes through them. */
export type ExchangeMoment =
  /** The submission's own answer. */
  | 'submitted'
  /** The status while the task waited in the queue (no worker had claimed it yet). */
  | 'queued'
  /** The status once a worker claimed it, before the engine reported any progress. */
  | 'started'
  /** The status while the engine sampled, after its first step. */
  | 'sampling'
  /** The status once the task had ended. */
  | 'finished';

export interface RecordedAnswer {
  readonly moment: ExchangeMoment;
  readonly method: 'GET' | 'POST';
  /** The request path, the task's id written `<task-id>`. */
  readonly path: string;
  /** The HTTP status of the answer. */
  readonly status: number;
  readonly body: unknown;
}

/** One output image, as the task's download link served it. */
export interface RecordedOutput {
  readonly format: string;
  readonly width: number;
  readonly height: number;
}

export interface RecordedExchange {
  /** The task endpoint, e.g. `/outpainting/v1`. */
  readonly path: string;
  /** The engine that ran the task, as the worker's registry chose it. */
  readonly engine: string;
  /** The request as sent: its body is the contract's example of the endpoint. */
  readonly request: { readonly method: 'POST'; readonly path: string; readonly body: unknown };
  readonly answers: readonly RecordedAnswer[];
  /** The images behind the final answer's `download_urls`, in order. */
  readonly outputs: readonly RecordedOutput[];
}

/** The file name (without `.json`) of a path's recording: `/sd/text2image/v1` → `sd-text2image-v1`. */
export function recordingSlug(path: string): string {
  return path.replace(/^\//, '').replace(/[^A-Za-z0-9_.]+/g, '-');
}

/** When each answer was taken, as the page says it. */
export const MOMENT_LABELS: Readonly<Record<ExchangeMoment, string>> = {
  submitted: 'Submitted',
  queued: 'While it waits in the queue',
  started: 'Once a worker has claimed it, before the engine reports progress',
  sampling: 'While the engine samples, after its first step',
  finished: 'Once it has ended',
};

/** What ran the task, in one sentence of Markdown (`code` spans only). */
export function engineSentence(engine: string): string {
  if (engine === 'comfyui') {
    return (
      'Recorded with the `comfyui` engine against the repository’s fake ComfyUI server, which checks ' +
      'the graph as a real server does but draws plain gradients instead of diffusing: the answers, ' +
      'the image count and sizes are real, the pixels are not.'
    );
  }
  if (engine === 'sandbox') {
    return 'Recorded with the `sandbox` engine, the one that answers this endpoint in this release.';
  }
  return `Recorded with the \`${engine}\` engine, which runs its real models on the CPU.`;
}

/** "2 PNG images, 1024 × 1024", "1 PNG image, 256 × 256 and 1 PNG image, 64 × 64", or "no image". */
export function outputsSentence(outputs: readonly RecordedOutput[]): string {
  if (outputs.length === 0) return 'no image';
  const groups: { output: RecordedOutput; count: number }[] = [];
  for (const output of outputs) {
    const last = groups.at(-1);
    const same =
      last &&
      last.output.format === output.format &&
      last.output.width === output.width &&
      last.output.height === output.height;
    if (same) last.count += 1;
    else groups.push({ output, count: 1 });
  }
  const parts = groups.map(
    ({ output, count }) =>
      `${count} ${output.format.toUpperCase()} ${count === 1 ? 'image' : 'images'}, ${output.width} × ${output.height}`,
  );
  return parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}
