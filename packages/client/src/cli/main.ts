import packageJson from '../../package.json' with { type: 'json' };
import { ApiError, AuthError, NetworkError, ValidationError } from '../errors.ts';
import type { ValidationIssue } from '../types.ts';
import { modelsCommand, tasksCommand } from './commands/records.ts';
import { runCommand } from './commands/run.ts';
import { cancelCommand, statusCommand } from './commands/task-control.ts';
import { usageCommand } from './commands/usage.ts';
import { webhookCommand } from './commands/webhook.ts';
import type { CliContext } from './context.ts';
import { EXIT, UsageError } from './exit-codes.ts';
import { mainHelp } from './help.ts';
import { flagOf } from './schema-fields.ts';

/** `imagegen`: dispatches to its commands, and turns what they throw into a message and an exit code. */

const COMMANDS: Readonly<Record<string, (argv: readonly string[], context: CliContext) => Promise<number>>> =
  {
    run: runCommand,
    status: statusCommand,
    cancel: cancelCommand,
    tasks: tasksCommand,
    models: modelsCommand,
    usage: usageCommand,
    webhook: webhookCommand,
    // Loaded when used: the MCP SDK is no weight on the other commands' start.
    mcp: async (argv, context) => (await import('./commands/mcp.ts')).mcpCommand(argv, context),
  };

export const VERSION: string = packageJson.version;

export async function main(argv: readonly string[], context: CliContext): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === '--help' || command === '-h') {
      context.stdout.write(mainHelp(VERSION));
      return command === undefined ? EXIT.badInput : EXIT.ok;
    }
    if (command === '--version' || command === '-v') {
      context.stdout.write(`${VERSION}\n`);
      return EXIT.ok;
    }
    if (command === 'help') return await main(rest.length > 0 ? [...rest, '--help'] : ['--help'], context);
    const run = COMMANDS[command];
    if (!run) throw new UsageError(`unknown command ${command}; \`imagegen --help\` lists them`);
    return await run(rest, context);
  } catch (error) {
    return reported(error, context);
  }
}

/** `--samples` for ["body", "samples"]: a refusal names the flag the user typed. */
function whereOf(issue: ValidationIssue): string {
  const [part, field, ...more] = issue.loc;
  if ((part === 'body' || part === 'query') && typeof field === 'string') {
    return [flagOf(field), ...more].join('.');
  }
  if (part === 'header' && typeof field === 'string') return flagOf(field.toLowerCase());
  return issue.loc.join('.');
}

function reported(error: unknown, context: CliContext): number {
  const say = (line: string) => context.stderr.write(`imagegen: ${line}\n`);
  if (error instanceof UsageError) {
    say(error.message);
    return EXIT.badInput;
  }
  if (error instanceof ValidationError) {
    say('the API refused the request:');
    for (const issue of error.issues) context.stderr.write(`  ${whereOf(issue)}: ${issue.msg}\n`);
    return EXIT.badInput;
  }
  if (error instanceof AuthError) {
    say(`${error.message}\n  (the key comes from IMAGEGEN_API_KEY or the config file: \`imagegen --help\`)`);
    return EXIT.unavailable;
  }
  if (error instanceof ApiError) {
    say(error.message);
    // 404 (no such task or record) and 409 (it already ended) are about what was asked.
    return error.status < 500 && error.status !== 429 ? EXIT.badInput : EXIT.unavailable;
  }
  if (error instanceof NetworkError) {
    say(`${error.message}\n  (is the API running? the address comes from IMAGEGEN_BASE_URL or --base-url)`);
    return EXIT.unavailable;
  }
  if (context.interrupted.aborted) {
    say('interrupted');
    return EXIT.interrupted;
  }
  say(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return EXIT.failed;
}
