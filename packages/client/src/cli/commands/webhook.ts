import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { WebhookVerificationError } from '../../errors.ts';
import { verifyWebhook } from '../../webhook.ts';
import { parseArgs } from '../args.ts';
import { type CliContext, single, switchOn } from '../context.ts';
import { EXIT, UsageError } from '../exit-codes.ts';
import { webhookHelp } from '../help.ts';
import { deliveriesCommand, redeliverCommand } from './deliveries.ts';

/**
 * `imagegen webhook verify`: checks a delivery's signature; prints its body when it holds.
 * `imagegen webhook deliveries` and `redeliver`: your webhook calls (deliveries.ts).
 */
export async function webhookCommand(argv: readonly string[], context: CliContext): Promise<number> {
  if (argv[0] === 'deliveries') return deliveriesCommand(argv.slice(1), context);
  if (argv[0] === 'redeliver') return redeliverCommand(argv.slice(1), context);
  const { positionals, values } = parseArgs(argv, [
    { flag: '--secret', takesValue: true },
    { flag: '--id', takesValue: true },
    { flag: '--timestamp', takesValue: true },
    { flag: '--signature', takesValue: true },
    { flag: '--body', takesValue: true },
    { flag: '--tolerance', takesValue: true },
    { flag: '--help', takesValue: false },
  ]);
  if (switchOn(values, '--help') || positionals[0] !== 'verify') {
    context.stdout.write(webhookHelp());
    return switchOn(values, '--help') ? EXIT.ok : EXIT.badInput;
  }
  const secret = single(values, '--secret') ?? context.env.IMAGEGEN_WEBHOOK_SECRET;
  if (!secret) throw new UsageError('webhook verify needs --secret (or IMAGEGEN_WEBHOOK_SECRET)');
  const headers = {
    'webhook-id': single(values, '--id'),
    'webhook-timestamp': single(values, '--timestamp'),
    'webhook-signature': single(values, '--signature'),
  };
  const bodyFile = single(values, '--body');
  const body =
    bodyFile === undefined
      ? await readAll(context.stdin)
      : await readFile(path.resolve(context.cwd, bodyFile));
  const tolerance = single(values, '--tolerance');
  try {
    const payload = await verifyWebhook({
      secret,
      headers,
      body,
      ...(tolerance === undefined ? {} : { toleranceSeconds: Number(tolerance) }),
    });
    context.stdout.write(`${JSON.stringify(payload)}\n`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    context.stderr.write(`imagegen: the webhook does not verify: ${error.message}\n`);
    return EXIT.failed;
  }
}

async function readAll(stream: AsyncIterable<Uint8Array | string>): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
