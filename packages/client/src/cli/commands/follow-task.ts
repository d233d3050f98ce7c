import type { ImagegenClient } from '../../client.ts';
import { TaskFailedError, TimeoutError } from '../../errors.ts';
import type { AnyStatus, TaskPath } from '../../types.ts';
import type { CliContext } from '../context.ts';
import { EXIT, UsageError } from '../exit-codes.ts';
import type { ProgressView } from '../progress.ts';

const DEFAULT_TIMEOUT_SECONDS = 600;

/** `--timeout <seconds>` in ms: 600 s unless given, none for 0. */
export function timeoutOf(text: string | undefined): number | undefined {
  const seconds = text === undefined ? DEFAULT_TIMEOUT_SECONDS : Number(text);
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new UsageError(`--timeout takes seconds, not "${text}"`);
  return seconds === 0 ? undefined : seconds * 1000;
}

export interface FollowOptions {
  readonly json: boolean;
  readonly out: string | undefined;
  readonly timeoutMs: number | undefined;
  readonly cancelOnTimeout: boolean;
  readonly print: (
    context: CliContext,
    client: ImagegenClient,
    id: string,
    status: AnyStatus,
    options: { json: boolean; out: string | undefined; path: TaskPath },
  ) => Promise<void>;
}

/**
 * Follows a task to its end, showing its progress, and answers the exit code: the outputs and 0,
 * the error and 1, 3 at the deadline; Ctrl-C cancels the task (130).
 */
export async function followTask(
  context: CliContext,
  client: ImagegenClient,
  pipeline: { path: TaskPath; name: string },
  id: string,
  view: ProgressView,
  options: FollowOptions,
): Promise<number> {
  try {
    const status = await client.wait(pipeline.path, id, {
      signal: context.interrupted,
      cancelOnAbort: true,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      cancelOnTimeout: options.cancelOnTimeout,
      onProgress: (pending) => view.show(pending as AnyStatus),
      // The line a preview adds says the picture is forming (engines that send previews only).
      onPreview: (preview) => view.preview(preview),
    });
    view.end();
    await options.print(context, client, id, status as AnyStatus, { ...options, path: pipeline.path });
    return EXIT.ok;
  } catch (error) {
    view.end();
    if (error instanceof TaskFailedError) {
      if (options.json) context.stdout.write(`${JSON.stringify({ id, ...error.status })}\n`);
      context.stderr.write(`imagegen: task ${id} failed: ${error.message}\n`);
      return EXIT.failed;
    }
    if (error instanceof TimeoutError) {
      const then = error.cancelled
        ? 'it was cancelled'
        : `it goes on: \`imagegen status ${pipeline.name} ${id} --wait\` follows it`;
      context.stderr.write(`imagegen: task ${id} did not end within ${error.timeoutMs / 1000} s; ${then}\n`);
      return EXIT.timeout;
    }
    if (context.interrupted.aborted) {
      context.stderr.write(`imagegen: interrupted; task ${id} was cancelled\n`);
      return EXIT.interrupted;
    }
    throw error;
  }
}
