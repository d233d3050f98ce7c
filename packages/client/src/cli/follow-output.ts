import type { ImagegenClient } from '../client.ts';
import { saveOutputs } from '../node.ts';
import type { AnyStatus, TaskPath } from '../types.ts';
import type { CliContext } from './context.ts';
import { taskEngine } from './task-engine.ts';

/**
 * What `run` and `status --wait` print once a task succeeded: with `--json`, its final status (and
 * the files saved, the engine that ran it and whether its result is a placeholder) as one JSON
 * object; otherwise one line per output link, or per file saved with `--out`, or the answer itself
 * (an image2prompt prompt, a model id), and on stderr a line when the images are placeholders
 * and one per note of the task (a field the model took no notice of, a prompt used as given).
 */
export async function printSuccess(
  context: CliContext,
  client: ImagegenClient,
  id: string,
  status: AnyStatus,
  options: { json: boolean; out: string | undefined; path: TaskPath },
): Promise<void> {
  const answer = status as {
    download_urls?: string[] | null;
    prompt?: string;
    model_id?: string | null;
    notes?: string[];
  };
  const urls = answer.download_urls ?? [];
  const files =
    options.out === undefined || urls.length === 0
      ? undefined
      : await saveOutputs(client, urls, options.out, {
          prefix: `${id.slice(0, 8)}-`,
          signal: context.interrupted,
        });
  const ran = await taskEngine(client, options.path, id, context.interrupted);
  if (options.json) {
    context.stdout.write(`${JSON.stringify({ id, ...status, ...(files ? { files } : {}), ...ran })}\n`);
    return;
  }
  const lines = files ?? (urls.length > 0 ? urls : [answer.prompt ?? answer.model_id ?? status.status]);
  context.stdout.write(`${lines.join('\n')}\n`);
  for (const note of answer.notes ?? []) context.stderr.write(`imagegen: note: ${note}\n`);
  if (ran?.placeholder) {
    context.stderr.write(
      `imagegen: placeholders: the ${ran.engine} engine answered this task with labelled placeholder ` +
        'images, not real ones; a server with COMFYUI_URLS set draws real images\n',
    );
  }
}
