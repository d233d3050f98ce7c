/**
 * The `imagegen` command's help texts, as the program itself prints them, for the Client libraries
 * page: run at build time (`npm run generate`, into .generated/cli-help.json), never copied by
 * hand. Keys are the arguments after `imagegen`.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';

export const CLI_HELP_COMMANDS = [
  '--help',
  'run --help',
  'run sd/text2image --help',
  'status --help',
  'cancel --help',
  'tasks --help',
  'models --help',
  'webhook --help',
  'webhook deliveries --help',
  'webhook redeliver --help',
  'usage --help',
  'mcp --help',
] as const;

const run = promisify(execFile);
const manifest = createRequire(import.meta.url).resolve('@imagegen/client/package.json');
const bin = path.join(path.dirname(manifest), 'bin/imagegen.js');

const texts = await Promise.all(
  CLI_HELP_COMMANDS.map(async (args) => {
    const { stdout } = await run(process.execPath, [bin, ...args.split(' ')]);
    return [args, stdout] as const;
  }),
);
process.stdout.write(`${JSON.stringify(Object.fromEntries(texts), null, 2)}\n`);
