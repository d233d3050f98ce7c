import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { CancelAfter } from '../../client.ts';
import { uploadFiles } from '../../node.ts';
import { parseArgs } from '../args.ts';
import { type CliContext, clientFor, single, switchOn } from '../context.ts';
import { EXIT, UsageError } from '../exit-codes.ts';
import { printSuccess } from '../follow-output.ts';
import { pipelineHelp, runHelp } from '../help.ts';
import { type Pipeline, pipelineNamed } from '../pipelines.ts';
import { progressView } from '../progress.ts';
import { type FieldFlag, flagValue } from '../schema-fields.ts';
import { followTask, timeoutOf } from './follow-task.ts';
import { RUN_OPTIONS } from './run-options.ts';

export async function runCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    context.stdout.write(runHelp());
    return name === undefined ? EXIT.badInput : EXIT.ok;
  }
  const pipeline = pipelineNamed(name);
  const specs = [
    ...RUN_OPTIONS,
    ...pipeline.fields.map((field) => ({
      flag: field.flag,
      takesValue: !(field.scalar === 'boolean' && field.arity === 'one'),
    })),
  ];
  const { positionals, values } = parseArgs(rest, specs);
  if (switchOn(values, '--help')) {
    context.stdout.write(pipelineHelp(pipeline));
    return EXIT.ok;
  }
  if (positionals.length > 0)
    throw new UsageError(`unexpected ${positionals.join(' ')}: fields are given as flags`);
  const body = bodyOf(pipeline, values);
  const client = await clientFor(context, single(values, '--base-url'));
  await uploadLocalImages(pipeline.fields, body, context, (files) =>
    uploadFiles(client, files, { signal: context.interrupted }),
  );

  const key = single(values, '--idempotency-key');
  // The API checks the duration; its refusal names this flag.
  const cancelAfter = single(values, '--cancel-after') as CancelAfter | undefined;
  const submitted = await client.submit(pipeline.path, body as never, {
    ...(key ? { idempotencyKey: key } : {}),
    ...(cancelAfter !== undefined ? { cancelAfter } : {}),
    signal: context.interrupted,
  });
  const { id } = submitted as { id: string };
  const json = switchOn(values, '--json');
  if (single(values, '--wait') === 'false') {
    context.stdout.write(json ? `${JSON.stringify(submitted)}\n` : `${id}\n`);
    return EXIT.ok;
  }
  const view = progressView(context.stderr, `${pipeline.name} ${id.slice(0, 8)}`);
  return followTask(context, client, pipeline, id, view, {
    json,
    out: single(values, '--out'),
    timeoutMs: timeoutOf(single(values, '--timeout')),
    cancelOnTimeout: switchOn(values, '--cancel-on-timeout'),
    print: printSuccess,
  });
}

function bodyOf(pipeline: Pipeline, values: Map<string, string[]>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of pipeline.fields) {
    const given = values.get(field.flag);
    if (given) body[field.name] = flagValue(field, given);
  }
  const events = single(values, '--events');
  if (events !== undefined) {
    if (!pipeline.fields.some((field) => field.name === EVENTS_FIELD))
      throw new UsageError(`${pipeline.name} calls no webhook: --events does not apply`);
    if (body[EVENTS_FIELD] !== undefined)
      throw new UsageError('give --events or --webhook-events-filter, not both');
    // The API checks the names (a 422 names the flag); empty items are the commas' slack.
    body[EVENTS_FIELD] = events
      .split(',')
      .map((event) => event.trim())
      .filter((event) => event !== '');
  }
  return body;
}

/** The request field `--events` fills. */
const EVENTS_FIELD = 'webhook_events_filter';

/**
 * Image fields given as local files (anything but an http(s) URL) are uploaded first, in one go,
 * and replaced by the URLs the API answers.
 */
async function uploadLocalImages(
  fields: readonly FieldFlag[],
  body: Record<string, unknown>,
  context: CliContext,
  upload: (files: string[]) => Promise<string[]>,
): Promise<void> {
  const local = (value: unknown) => typeof value === 'string' && !/^https?:\/\//i.test(value);
  const files: string[] = [];
  for (const field of fields.filter((f) => f.image && body[f.name] !== undefined)) {
    for (const value of [body[field.name]].flat()) {
      if (!local(value)) continue;
      const file = path.resolve(context.cwd, value as string);
      const found = await stat(file).catch(() => null);
      if (!found?.isFile())
        throw new UsageError(`${field.flag}: ${value} is neither an http(s) URL nor a file`);
      files.push(file);
    }
  }
  if (files.length === 0) return;
  const urls = await upload(files);
  const byFile = new Map(files.map((file, n) => [file, urls[n]!]));
  const replace = (value: unknown) =>
    local(value) ? byFile.get(path.resolve(context.cwd, value as string)) : value;
  for (const field of fields.filter((f) => f.image && body[f.name] !== undefined)) {
    const value = body[field.name];
    body[field.name] = Array.isArray(value) ? value.map(replace) : replace(value);
  }
}
