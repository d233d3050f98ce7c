import type { TaskListEntry, TaskListQuery } from '../../types.ts';
import { parseArgs } from '../args.ts';
import { type CliContext, clientFor, single, switchOn } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { modelsHelp, tasksHelp } from '../help.ts';
import { pipelineNamed, TASK_LIST_FIELDS } from '../pipelines.ts';
import { flagValue } from '../schema-fields.ts';

/** `imagegen tasks` and `imagegen models`: the owner's records, as columns or JSON lines. */

function columns(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, n) => Math.max(...rows.map((row) => row[n]!.length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, n) => cell.padEnd(widths[n]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export async function tasksCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { values } = parseArgs(argv, [
    ...TASK_LIST_FIELDS.map((field) => ({ flag: field.flag, takesValue: true })),
    { flag: '--all', takesValue: false },
    { flag: '--json', takesValue: false },
    { flag: '--base-url', takesValue: true },
    { flag: '--help', takesValue: false },
  ]);
  if (switchOn(values, '--help')) {
    context.stdout.write(tasksHelp());
    return EXIT.ok;
  }
  const query: Record<string, unknown> = {};
  for (const field of TASK_LIST_FIELDS) {
    const given = values.get(field.flag);
    if (given) query[field.name] = flagValue(field, given);
  }
  // `--pipeline sd/text2image` as well as the path the API takes.
  if (typeof query.pipeline === 'string') query.pipeline = pipelineNamed(query.pipeline).path;
  const client = await clientFor(context, single(values, '--base-url'));
  const signal = context.interrupted;
  const tasks: TaskListEntry[] = [];
  let next: string | null = null;
  if (switchOn(values, '--all')) {
    for await (const task of client.allTasks(query as Omit<TaskListQuery, 'cursor'>, { signal }))
      tasks.push(task);
  } else {
    const page = await client.tasks(query as TaskListQuery, { signal });
    tasks.push(...page.tasks);
    next = page.next_cursor;
  }
  if (switchOn(values, '--json')) {
    for (const task of tasks) context.stdout.write(`${JSON.stringify(task)}\n`);
  } else if (tasks.length > 0) {
    const rows = tasks.map((task) => [
      task.id,
      task.pipeline,
      task.state,
      task.created_at,
      task.finished_at ?? '',
    ]);
    context.stdout.write(`${columns([['ID', 'PIPELINE', 'STATE', 'CREATED', 'FINISHED'], ...rows])}\n`);
  }
  if (next) context.stderr.write(`more: imagegen tasks --cursor ${next}\n`);
  return EXIT.ok;
}

export async function modelsCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { values } = parseArgs(argv, [
    { flag: '--json', takesValue: false },
    { flag: '--base-url', takesValue: true },
    { flag: '--help', takesValue: false },
  ]);
  if (switchOn(values, '--help')) {
    context.stdout.write(modelsHelp());
    return EXIT.ok;
  }
  const client = await clientFor(context, single(values, '--base-url'));
  const models = await client.models({ signal: context.interrupted });
  if (switchOn(values, '--json')) {
    for (const model of models) context.stdout.write(`${JSON.stringify(model)}\n`);
  } else if (models.length > 0) {
    const rows = models.map((model) => [
      model.model_id,
      model.model_name,
      model.base_model,
      model.model_type,
    ]);
    context.stdout.write(`${columns([['ID', 'NAME', 'BASE', 'TYPE'], ...rows])}\n`);
  }
  return EXIT.ok;
}
