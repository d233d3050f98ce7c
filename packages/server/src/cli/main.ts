/**
 * `npm run --silent cli -- <command>`: owners, keys, subscriptions, servers and failed tasks. Works beside a
 * running `npm start` (it reuses the bundled PostgreSQL) or alone (it starts it for the command).
 */
import { parseArgs } from 'node:util';
import { helpText, runCommand, USAGE, UsageError } from './commands.ts';
import { openDatabase } from './database.ts';
import { readStartConfig } from './start-config.ts';

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      owner: { type: 'string' },
      prefix: { type: 'string' },
      id: { type: 'string' },
      'pod-id': { type: 'string' },
      'period-end': { type: 'string' },
      days: { type: 'string' },
      limit: { type: 'string' },
      since: { type: 'string' },
      pipeline: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  // `help [command]` is `[command] --help`; neither needs the database.
  if (positionals[0] === 'help' || values.help) {
    console.log(helpText(positionals[0] === 'help' ? positionals.slice(1) : positionals));
    return 0;
  }
  if (positionals.length === 0) {
    console.log(USAGE);
    return 2;
  }
  const config = readStartConfig(process.env);
  const db = await openDatabase({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    applicationName: 'imagegen-cli',
    poolSize: 2,
  });
  try {
    const out = await runCommand(db.pool, positionals, values);
    console.log(values.json ? JSON.stringify(out.json) : out.text);
    return 0;
  } finally {
    await db.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`error: ${(error as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    console.error(`error: ${(error as Error).message}`);
    process.exit(1);
  },
);
