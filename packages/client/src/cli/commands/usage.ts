import { parseArgs } from '../args.ts';
import { type CliContext, clientFor, single, switchOn } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { usageHelp } from '../help.ts';
import { columns } from './records.ts';

/** `imagegen usage`: your finished tasks by UTC day and pipeline (GET /usage/v1). */
export async function usageCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { values } = parseArgs(argv, [
    { flag: '--from', takesValue: true },
    { flag: '--to', takesValue: true },
    { flag: '--json', takesValue: false },
    { flag: '--base-url', takesValue: true },
    { flag: '--help', takesValue: false },
  ]);
  if (switchOn(values, '--help')) {
    context.stdout.write(usageHelp());
    return EXIT.ok;
  }
  const from = single(values, '--from');
  const to = single(values, '--to');
  const client = await clientFor(context, single(values, '--base-url'));
  const report = await client.usage(
    { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) },
    { signal: context.interrupted },
  );
  if (switchOn(values, '--json')) {
    context.stdout.write(`${JSON.stringify(report)}\n`);
  } else if (report.rows.length > 0) {
    const header = ['DAY', 'PIPELINE', 'TASKS', 'OK', 'FAILED', 'IMAGES', 'PIXELS', 'RUN S', 'QUEUE S'];
    const rows = report.rows.map((row) => [
      row.day,
      row.pipeline,
      String(row.tasks),
      String(row.succeeded),
      String(row.failed),
      String(row.images),
      String(row.pixels),
      row.run_seconds.toFixed(1),
      row.queue_seconds.toFixed(1),
    ]);
    context.stdout.write(`${columns([header, ...rows])}\n`);
  } else {
    context.stdout.write(`No finished tasks from ${report.from} to ${report.to}.\n`);
  }
  return EXIT.ok;
}
