import type { TaskListEntry, TaskListQuery } from '../../types.ts';
import { type FlagSpec, type ParsedArgs, parseArgs } from '../args.ts';
import { type CliContext, clientFor, single, switchOn } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { modelsHelp, tasksHelp } from '../help.ts';
import { pipelineNamed, TASK_LIST_FIELDS } from '../pipelines.ts';
import { flagValue } from '../schema-fields.ts';

/** `imagegen tasks` and `imagegen models`: the owner's records, as columns or JSON lines. */

export function columns(rows: readonly (readonly string[])[]): string {
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

const TASKS_FLAGS: readonly FlagSpec[] = [
  ...TASK_LIST_FIELDS.map((field) => ({ flag: field.flag, takesValue: true })),
  { flag: '--all', takesValue: false },
  { flag: '--json', takesValue: false },
  { flag: '--base-url', takesValue: true },
  { flag: '--help', takesValue: false },
];

/** A word as a POSIX shell reads it back: plain when it is safe, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The command line that lists the next page: every flag as it was given (the filters, `--json`,
 * `--base-url`), in its order, with the next page's cursor in place of the last one.
 */
function nextPageCommand(values: ParsedArgs['values'], cursor: string): string {
  const switches = new Set(TASKS_FLAGS.filter((spec) => !spec.takesValue).map((spec) => spec.flag));
  const words = ['imagegen', 'tasks'];
  for (const [flag, given] of values) {
    if (flag === '--cursor') continue;
    for (const value of given) {
      if (!switches.has(flag)) words.push(flag, shellWord(value));
      else if (value === 'true') words.push(flag);
    }
  }
  return [...words, '--cursor', shellWord(cursor)].join(' ');
}

export async function tasksCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { values } = parseArgs(argv, TASKS_FLAGS);
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
      // A placeholder says so where the user looks, not only in the picture.
      task.engine === null ? '' : task.placeholder ? `${task.engine} (placeholder)` : task.engine,
      task.created_at,
      task.finished_at ?? '',
    ]);
    const header = ['ID', 'PIPELINE', 'STATE', 'ENGINE', 'CREATED', 'FINISHED'];
    context.stdout.write(`${columns([header, ...rows])}\n`);
  } else {
    // The filters that chose no task (a page's size and place choose none).
    const filters = TASK_LIST_FIELDS.filter(
      (field) => field.name !== 'cursor' && field.name !== 'limit' && values.has(field.flag),
    )
      .map((field) => `${field.flag} ${shellWord(single(values, field.flag)!)}`)
      .join(' ');
    context.stdout.write(filters ? `No tasks match ${filters}.\n` : 'No tasks yet.\n');
  }
  if (next) context.stderr.write(`more: ${nextPageCommand(values, next)}\n`);
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
  } else {
    context.stdout.write('No models yet: load one with /load_model/v1 or train one with /train_model/v1.\n');
  }
  return EXIT.ok;
}
