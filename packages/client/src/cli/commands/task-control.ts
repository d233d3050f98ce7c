import { hasFailed, hasSucceeded } from '../../task-states.ts';
import type { AnyStatus } from '../../types.ts';
import { parseArgs } from '../args.ts';
import { type CliContext, clientFor, single, switchOn } from '../context.ts';
import { EXIT, UsageError } from '../exit-codes.ts';
import { printSuccess } from '../follow-output.ts';
import { cancelHelp, statusHelp } from '../help.ts';
import { type Pipeline, pipelineNamed } from '../pipelines.ts';
import { describePending, progressView } from '../progress.ts';
import { followTask, timeoutOf } from './follow-task.ts';

/** `imagegen status` and `imagegen cancel`: a task named by its pipeline and id. */

const STATUS_FLAGS = [
  { flag: '--wait', takesValue: false },
  { flag: '--json', takesValue: false },
  { flag: '--out', takesValue: true },
  { flag: '--timeout', takesValue: true },
  { flag: '--cancel-on-timeout', takesValue: false },
  { flag: '--base-url', takesValue: true },
  { flag: '--help', takesValue: false },
];

/** `<pipeline> <id>`, or a status path `/sd/text2image/v1/status/<id>`. */
function taskOf(positionals: readonly string[], command: string): { pipeline: Pipeline; id: string } {
  if (positionals.length === 1) {
    const statusPath = /^(.+)\/status\/([^/]+)$/.exec(positionals[0]!);
    if (statusPath) return { pipeline: pipelineNamed(statusPath[1]!), id: statusPath[2]! };
  }
  if (positionals.length !== 2) throw new UsageError(`imagegen ${command} takes a pipeline and a task id`);
  return { pipeline: pipelineNamed(positionals[0]!), id: positionals[1]! };
}

function summary(status: AnyStatus): string {
  if (hasSucceeded(status) || hasFailed(status)) return status.status;
  return `${status.status}: ${describePending(status)}`;
}

export async function statusCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { positionals, values } = parseArgs(argv, STATUS_FLAGS);
  if (switchOn(values, '--help')) {
    context.stdout.write(statusHelp());
    return EXIT.ok;
  }
  const { pipeline, id } = taskOf(positionals, 'status');
  const client = await clientFor(context, single(values, '--base-url'));
  const json = switchOn(values, '--json');
  if (switchOn(values, '--wait')) {
    return followTask(
      context,
      client,
      pipeline,
      id,
      progressView(context.stderr, `${pipeline.name} ${id.slice(0, 8)}`),
      {
        json,
        out: single(values, '--out'),
        timeoutMs: timeoutOf(single(values, '--timeout')),
        cancelOnTimeout: switchOn(values, '--cancel-on-timeout'),
        print: printSuccess,
      },
    );
  }
  const status = (await client.status(pipeline.path, id, { signal: context.interrupted })) as AnyStatus;
  if (json) context.stdout.write(`${JSON.stringify(status)}\n`);
  else {
    context.stdout.write(`${summary(status)}\n`);
    const answer = status as { download_urls?: string[] | null; error?: string };
    for (const line of answer.download_urls ?? []) context.stdout.write(`${line}\n`);
    if (answer.error) context.stdout.write(`${answer.error}\n`);
  }
  return hasFailed(status) ? EXIT.failed : EXIT.ok;
}

export async function cancelCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { positionals, values } = parseArgs(argv, [
    { flag: '--json', takesValue: false },
    { flag: '--base-url', takesValue: true },
    { flag: '--help', takesValue: false },
  ]);
  if (switchOn(values, '--help')) {
    context.stdout.write(cancelHelp());
    return EXIT.ok;
  }
  const { pipeline, id } = taskOf(positionals, 'cancel');
  const client = await clientFor(context, single(values, '--base-url'));
  const status = (await client.cancel(pipeline.path, id, { signal: context.interrupted })) as AnyStatus;
  context.stdout.write(switchOn(values, '--json') ? `${JSON.stringify(status)}\n` : `cancelled task ${id}\n`);
  return EXIT.ok;
}
