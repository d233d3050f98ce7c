import type { WebhookDelivery } from '../../types.ts';
import { parseArgs } from '../args.ts';
import { type CliContext, clientFor, single, switchOn } from '../context.ts';
import { EXIT, UsageError } from '../exit-codes.ts';
import { deliveriesHelp, redeliverHelp } from '../help.ts';
import { columns } from './records.ts';

/** `imagegen webhook deliveries`: your webhook calls, newest first, one line each (or JSON lines). */
export async function deliveriesCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { values } = parseArgs(argv, [
    { flag: '--task-id', takesValue: true },
    { flag: '--limit', takesValue: true },
    { flag: '--json', takesValue: false },
    { flag: '--base-url', takesValue: true },
    { flag: '--help', takesValue: false },
  ]);
  if (switchOn(values, '--help')) {
    context.stdout.write(deliveriesHelp());
    return EXIT.ok;
  }
  const taskId = single(values, '--task-id');
  const limit = single(values, '--limit');
  if (limit !== undefined && !/^\d+$/.test(limit))
    throw new UsageError(`--limit takes a whole number, not "${limit}"`);
  const client = await clientFor(context, single(values, '--base-url'));
  const { deliveries } = await client.deliveries(
    {
      ...(taskId === undefined ? {} : { task_id: taskId }),
      ...(limit === undefined ? {} : { limit: Number(limit) }),
    },
    { signal: context.interrupted },
  );
  if (switchOn(values, '--json')) {
    for (const delivery of deliveries) context.stdout.write(`${JSON.stringify(delivery)}\n`);
  } else if (deliveries.length > 0) {
    const header = ['ID', 'TASK', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST'];
    context.stdout.write(`${columns([header, ...deliveries.map(deliveryRow)])}\n`);
  } else {
    context.stdout.write(
      taskId === undefined ? 'No webhook calls yet.\n' : `No webhook calls for ${taskId}.\n`,
    );
  }
  return EXIT.ok;
}

/** `imagegen webhook redeliver <id>`: sends a delivered or failed call again. */
export async function redeliverCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { positionals, values } = parseArgs(argv, [
    { flag: '--json', takesValue: false },
    { flag: '--base-url', takesValue: true },
    { flag: '--help', takesValue: false },
  ]);
  if (switchOn(values, '--help')) {
    context.stdout.write(redeliverHelp());
    return EXIT.ok;
  }
  const [id, ...extra] = positionals;
  if (id === undefined || extra.length > 0) throw new UsageError('webhook redeliver takes one delivery id');
  const client = await clientFor(context, single(values, '--base-url'));
  const delivery = await client.redeliver(id, { signal: context.interrupted });
  context.stdout.write(
    switchOn(values, '--json') ? `${JSON.stringify(delivery)}\n` : `${delivery.id} ${delivery.status}\n`,
  );
  return EXIT.ok;
}

/** One call as a line: its last attempt's HTTP status or error says how it went. */
function deliveryRow(delivery: WebhookDelivery): string[] {
  const last = delivery.attempts.at(-1);
  return [
    delivery.id,
    delivery.task_id ?? '',
    delivery.event,
    delivery.status,
    String(delivery.attempts.length),
    last ? (last.error ?? String(last.status_code ?? '')) : '',
  ];
}
