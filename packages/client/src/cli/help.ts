import { RUN_OPTIONS } from './commands/run-options.ts';
import { EXIT } from './exit-codes.ts';
import { PIPELINES, type Pipeline, TASK_LIST_FIELDS } from './pipelines.ts';
import { type FieldFlag, placeholderOf } from './schema-fields.ts';
import { DEFAULT_BASE_URL } from './settings.ts';

/**
 * The `--help` texts. The pipeline and task-list flags are printed from the contract's schemas;
 * the documentation site prints these texts by running the command (packages/docs).
 */

const WIDTH = 100;
const COLUMN = 34;
/** The commands' column of the main help: wide enough for `imagegen webhook verify --secret ...`. */
const COMMAND_COLUMN = 44;

/** `text` in lines of at most `width` characters (a longer word keeps a line of its own). */
function lines(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...out, line] : out;
}

function wrap(text: string, indent: number): string[] {
  return lines(text, WIDTH - indent).map((line) => ' '.repeat(indent) + line);
}

/** `  --flag <value>      what it does`, its text wrapped under itself. */
function row(usage: string, text: string, column = COLUMN): string {
  const head = `  ${usage}`;
  if (!text) return head;
  if (head.length >= column - 1) return [head, ...wrap(text, column)].join('\n');
  const [first = '', ...more] = lines(text, WIDTH - column);
  return [`${head.padEnd(column)}${first}`, ...more.map((line) => ' '.repeat(column) + line)].join('\n');
}

function fieldText(field: FieldFlag): string {
  const facts: string[] = [];
  if (field.required) facts.push('required');
  if (field.bounds) facts.push(field.bounds);
  if (field.defaultValue !== undefined) facts.push(`default ${JSON.stringify(field.defaultValue)}`);
  if (field.choices.length > 0) facts.push(`one of ${field.choices.join(', ')}`);
  if (field.arity !== 'one') facts.push(field.arity === 'list' ? 'repeat for several' : 'repeat for a list');
  if (field.image) facts.push('a local file is uploaded first');
  const description = field.description.replace(/`/g, '');
  return [facts.join('; '), description].filter(Boolean).join('. ');
}

function fieldUsage(field: FieldFlag): string {
  if (field.scalar === 'boolean' && field.arity === 'one')
    return `${field.flag}, --no-${field.flag.slice(2)}`;
  return `${field.flag} ${placeholderOf(field)}`;
}

export function fieldRows(fields: readonly FieldFlag[]): string {
  return fields.map((field) => row(fieldUsage(field), fieldText(field))).join('\n');
}

const EXIT_CODES = [
  `${EXIT.ok} success`,
  `${EXIT.failed} the task failed (or a webhook does not verify)`,
  `${EXIT.badInput} bad input (a flag, a file, or a body the API refused)`,
  `${EXIT.timeout} the timeout passed`,
  `${EXIT.unavailable} the API could not be reached or refused the key`,
  `${EXIT.interrupted} interrupted (the task is cancelled)`,
].join(', ');

export function mainHelp(version: string): string {
  return `imagegen ${version}: the imagegen API from the command line.

Usage:
${[
  row(
    'imagegen run <pipeline> [--field value...]',
    'submit a task and follow it to its outputs',
    COMMAND_COLUMN,
  ),
  row(
    'imagegen status <pipeline> <id> [--wait]',
    "a task's status; --wait follows it to its end",
    COMMAND_COLUMN,
  ),
  row('imagegen cancel <pipeline> <id>', 'cancel a queued or running task', COMMAND_COLUMN),
  row('imagegen tasks [--status ...]', 'your tasks, newest first', COMMAND_COLUMN),
  row('imagegen models', 'your models', COMMAND_COLUMN),
  row(
    'imagegen usage [--from <day>] [--to <day>]',
    'your finished tasks by day and pipeline',
    COMMAND_COLUMN,
  ),
  row('imagegen webhook verify --secret ...', "check a webhook's signature", COMMAND_COLUMN),
  row('imagegen webhook deliveries [--task-id ...]', 'your webhook calls and their attempts', COMMAND_COLUMN),
  row('imagegen webhook redeliver <id>', 'send a webhook call again', COMMAND_COLUMN),
  row('imagegen mcp', "the API's pipelines as MCP tools, over stdio (desktop agents)", COMMAND_COLUMN),
  row('imagegen help [command]', "this text, or a command's (also: <command> --help)", COMMAND_COLUMN),
].join('\n')}

A pipeline is a task path without its slash and /v1: sd/text2image, generate/v3, train_model.
\`imagegen run --help\` lists them; \`imagegen run <pipeline> --help\` lists its fields.

Settings:
${wrap(
  'IMAGEGEN_API_KEY is your key and IMAGEGEN_BASE_URL the API (default ' +
    `${DEFAULT_BASE_URL}); or {"apiKey": ..., "baseUrl": ...} in ~/.config/imagegen/config.json ` +
    '($XDG_CONFIG_HOME, or the file IMAGEGEN_CONFIG names). The environment wins over the file, ' +
    '--base-url over both.',
  2,
).join('\n')}

Exit codes:
${wrap(EXIT_CODES, 2).join('\n')}
`;
}

export function runHelp(): string {
  return `Usage: imagegen run <pipeline> [--field value...] [options]

Submits a task, shows its progress, prints its output links (or saves them with --out).

Pipelines:
${PIPELINES.map((pipeline) => row(pipeline.name, pipeline.summary)).join('\n')}

Options:
${RUN_OPTIONS.map((option) => row(option.usage, option.help)).join('\n')}
`;
}

export function pipelineHelp(pipeline: Pipeline): string {
  return `Usage: imagegen run ${pipeline.name} [--field value...] [options]

${wrap(`${pipeline.summary}. ${pipeline.description.replace(/`/g, '')}`, 0).join('\n')}
POST ${pipeline.path}

Fields:
${fieldRows(pipeline.fields)}

Options:
${RUN_OPTIONS.map((option) => row(option.usage, option.help)).join('\n')}
`;
}

export function statusHelp(): string {
  return `Usage: imagegen status <pipeline> <id> [--wait] [--json] [--out <folder>] [--timeout <seconds>]
       imagegen status <status path>

Prints a task's status. <status path> is what \`imagegen tasks\` prints, e.g.
/sd/text2image/v1/status/<id>. --wait follows the task to its end as \`imagegen run\` does.
`;
}

export function cancelHelp(): string {
  return `Usage: imagegen cancel <pipeline> <id> [--json]

Cancels a queued or running task and prints its final status. A task that already ended is left
as it is (exit 2).
`;
}

export function tasksHelp(): string {
  return `Usage: imagegen tasks [filters] [--all] [--json]

Lists your tasks, newest first: id, pipeline, state, created, finished.

Filters (GET /tasks/v1):
${fieldRows(TASK_LIST_FIELDS)}
${row('--all', 'every page, not only the first')}
${row('--json', 'one JSON object per task')}

No task to list prints one line saying so (--json prints nothing). When there are more tasks than
one page, stderr ends with the command that lists the next page: the same flags and a --cursor.
`;
}

export function modelsHelp(): string {
  return `Usage: imagegen models [--json]

Lists your models: id, name, base model, type; one line saying so when there are none (--json
prints nothing).
`;
}

export function usageHelp(): string {
  return `Usage: imagegen usage [--from <YYYY-MM-DD>] [--to <YYYY-MM-DD>] [--json]

Your finished tasks by UTC day and pipeline (GET /usage/v1): how many, succeeded, failed, images,
pixels, run and queue seconds. Both days are counted; default: the last 30 days.
`;
}

export function deliveriesHelp(): string {
  return `Usage: imagegen webhook deliveries [--task-id <id>] [--limit <1..100>] [--json]

Lists your webhook calls, newest first (GET /webhooks/v1/deliveries): id, task, event, status
(pending, delivered, failed), attempts and the last attempt's HTTP status or error. --json prints
each call with every attempt.
`;
}

export function redeliverHelp(): string {
  return `Usage: imagegen webhook redeliver <delivery id> [--json]

Sends a delivered or failed webhook call again: the same body and webhook-id, a new attempt. One
still pending answers 409 (exit 2).
`;
}

export function webhookHelp(): string {
  return `Usage: imagegen webhook verify --secret <whsec_...> --id <webhook-id> --timestamp <webhook-timestamp>
                              --signature <webhook-signature> [--body <file>] [--tolerance <seconds>]
       imagegen webhook deliveries [--task-id <id>] [--limit <n>] [--json]
       imagegen webhook redeliver <delivery id> [--json]

Checks a webhook delivery per Standard Webhooks and prints its body. The body is read from --body,
or from stdin; the secret may come from IMAGEGEN_WEBHOOK_SECRET instead (your secret:
GET /webhook_secret/v1). Exits 0 when the signature holds, 1 when it does not.
`;
}

export function mcpHelp(): string {
  return `Usage: imagegen mcp [--base-url <url>]

Serves the API's MCP tools over stdio, for desktop agents that start their MCP servers as
programs: one tool per pipeline (its fields as the tool's input schema) and task_status. Each
request goes to the API's /mcp with your key, and each answer and progress notification comes
back, so the tools are those of the API it talks to. stdout carries the protocol only; messages
go to stderr. It runs until the agent closes stdin; exit 4 when the API does not answer or
refuses the key.

A desktop agent's configuration (Claude Desktop's claude_desktop_config.json, for one):
  {"mcpServers": {"imagegen": {"command": "npx", "args": ["imagegen", "mcp"],
    "env": {"IMAGEGEN_API_KEY": "<your key>", "IMAGEGEN_BASE_URL": "${DEFAULT_BASE_URL}"}}}}
`;
}
