/** The CLI's commands (main.ts parses the command line and opens the database). */

import { isUuid, type Pool } from '@imagegen/db';
import { countPageViews } from '../analytics/sql/countPageViews.ts';
import { createApiKey, createOwner, setSubscription } from '../auth/accounts.ts';
import { isPlan, PLANS, type Plan } from '../auth/plans.ts';
import { currentSubscription } from '../auth/sql/currentSubscription.ts';
import { deleteServer } from '../auth/sql/deleteServer.ts';
import { getOwner } from '../auth/sql/getOwner.ts';
import { listOwners } from '../auth/sql/listOwners.ts';
import { listServers } from '../auth/sql/listServers.ts';
import { revokeApiKeys } from '../auth/sql/revokeApiKeys.ts';
import { upsertServer } from '../auth/sql/upsertServer.ts';
import { listAppliedMigrations } from '../db/sql/listAppliedMigrations.ts';
import { type FailedTask, listFailedTasks, requeueFailedTasks } from '../tasks/index.ts';

export const USAGE = `usage: npm run --silent cli -- <command> [options]

  owners create --name NAME [--plan PLAN] [--pod-id ID]   new owner with a subscription and a key
  owners list
  keys create --owner OWNER_ID                            another key for an owner (shown once)
  keys revoke --owner OWNER_ID [--prefix ig_xxxx]         revoke keys (all of the owner's without --prefix)
  subscriptions set --owner OWNER_ID --plan PLAN [--pod-id ID] [--period-end ISO_DATE]
  subscriptions show --owner OWNER_ID
  servers add --id SERVER_ID [--owner OWNER_ID]           routing target; with --owner an enterprise server
  servers list
  servers remove --id SERVER_ID
  analytics page-views [--days 7] [--limit 50]             the documentation pages viewed most
  tasks failed [--since 7d] [--pipeline PATH] [--limit 50]  tasks that failed their last attempt, newest
                                                          first, with every attempt's error (--since: 30m,
                                                          24h, 7d or an ISO date)
  tasks requeue TASK_ID...                                queue failed generation tasks again (same id,
                                                          request and seed; attempts renewed)
  migrate                                                 apply pending database migrations (every command
                                                          does on start) and list what the schema has
  help [COMMAND]                                          this text, or a command's (also: COMMAND --help)

Plans: ${PLANS.join(', ')} (EP plans are enterprise: they may route with server_id).
Add --json for machine-readable output. Database: DATABASE_URL, else the bundled one under IMAGEGEN_DATA_DIR.`;

export class UsageError extends Error {}

/**
 * What `help [command...]` and `[command...] --help` print: the whole usage, or the usage lines of
 * the commands the words name (`owners`, `keys revoke`) with the notes below them.
 */
export function helpText(words: readonly string[]): string {
  if (words.length === 0) return USAGE;
  const [head, table = '', ...notes] = USAGE.split('\n\n');
  const topic = words.join(' ');
  const lines = table.split('\n');
  const chosen: string[] = [];
  let taking = false;
  for (const line of lines) {
    // A line that starts with spaces only continues the command above it.
    if (/^ {3,}/.test(line)) {
      if (taking) chosen.push(line);
      continue;
    }
    taking = line.startsWith(`  ${topic} `) || line === `  ${topic}`;
    if (taking) chosen.push(line);
  }
  if (chosen.length === 0) throw new UsageError(`unknown command "${topic}"`);
  return [head, chosen.join('\n'), ...notes].join('\n\n');
}

export type Options = Record<string, string | boolean | undefined>;

/** A positive whole number option, or its default. */
function count(options: Options, name: string, fallback: number): number {
  const value = options[name];
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} takes a whole number above 0`);
  return n;
}

function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

const SINCE_UNITS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** --since: a time back from now (`30m`, `24h`, `7d`) or an ISO date; 7 days without it. */
function since(options: Options): Date {
  const value = options.since;
  if (value === undefined) return new Date(Date.now() - 7 * SINCE_UNITS.d!);
  const text = String(value);
  const back = /^(\d+)([mhd])$/.exec(text);
  if (back) return new Date(Date.now() - Number(back[1]) * SINCE_UNITS[back[2]!]!);
  const date = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(date.getTime()))
    throw new UsageError(`--since ${text} is neither 30m, 24h, 7d nor an ISO date`);
  return date;
}

/** A failed task as `tasks failed` prints it: one line, then each attempt's error indented. */
function failedLines(task: FailedTask): string {
  const head = `${task.id}  ${task.pipeline}  failed ${task.finished_at.toISOString()}  ${task.attempts} attempt(s)`;
  const errors = task.attempt_errors.length
    ? task.attempt_errors.map((e) => `  attempt ${e.attempt}: ${e.error}`)
    : // Failed before attempt_errors was recorded: its last error is all there is.
      [`  ${task.error ?? 'no error recorded'}`];
  return [head, ...errors].join('\n');
}

function plan(value: string): Plan {
  const upper = value.toUpperCase();
  if (!isPlan(upper)) throw new UsageError(`unknown plan ${value}; plans: ${PLANS.join(', ')}`);
  return upper;
}

async function existingOwner(pool: Pool, id: string) {
  const owner = isUuid(id) ? await getOwner(pool, id) : null;
  if (!owner) throw new UsageError(`no owner ${id} (see: owners list)`);
  return owner;
}

/** Runs one command; returns what to print (an object for --json, lines otherwise). */
export async function runCommand(
  pool: Pool,
  words: string[],
  options: Options,
): Promise<{ json: unknown; text: string }> {
  // The one command whose words go on after its name: the task ids.
  if (words[0] === 'tasks' && words[1] === 'requeue') return requeue(pool, words.slice(2));
  const command = words.join(' ');
  switch (command) {
    case 'owners create': {
      const created = await createOwner(pool, {
        name: required(options, 'name'),
        plan: plan(typeof options.plan === 'string' ? options.plan : 'FREE'),
        podId: typeof options['pod-id'] === 'string' ? options['pod-id'] : null,
      });
      return {
        json: {
          owner_id: created.owner.id,
          name: created.owner.name,
          plan: created.subscription.plan,
          api_key: created.apiKey,
        },
        text: `owner ${created.owner.id} (${created.owner.name}, ${created.subscription.plan})\nAPI key (shown once): ${created.apiKey}`,
      };
    }
    case 'owners list': {
      const owners = await listOwners(pool);
      return {
        json: owners.map((o) => ({
          owner_id: o.id,
          name: o.name,
          plan: o.plan,
          keys: o.keys,
          created_at: o.created_at,
        })),
        text:
          owners.map((o) => `${o.id}  ${o.name}  ${o.plan ?? 'no plan'}  ${o.keys} key(s)`).join('\n') ||
          'no owners',
      };
    }
    case 'keys create': {
      const owner = await existingOwner(pool, required(options, 'owner'));
      const key = await createApiKey(pool, owner.id);
      return { json: { owner_id: owner.id, api_key: key }, text: `API key (shown once): ${key}` };
    }
    case 'keys revoke': {
      const owner = await existingOwner(pool, required(options, 'owner'));
      const prefix = typeof options.prefix === 'string' ? options.prefix : '';
      const revoked = await revokeApiKeys(pool, owner.id, prefix);
      return { json: { owner_id: owner.id, revoked }, text: `revoked ${revoked} key(s)` };
    }
    case 'subscriptions set': {
      const owner = await existingOwner(pool, required(options, 'owner'));
      let periodEnd: Date | null = null;
      if (typeof options['period-end'] === 'string') {
        periodEnd = new Date(options['period-end']);
        if (Number.isNaN(periodEnd.getTime()))
          throw new UsageError(`--period-end ${options['period-end']} is not a date`);
      }
      const sub = await setSubscription(pool, {
        ownerId: owner.id,
        plan: plan(required(options, 'plan')),
        podId: typeof options['pod-id'] === 'string' ? options['pod-id'] : null,
        periodEnd,
      });
      return { json: sub, text: `owner ${owner.id} is now on ${sub.plan} (subscription ${sub.id})` };
    }
    case 'subscriptions show': {
      const owner = await existingOwner(pool, required(options, 'owner'));
      const sub = await currentSubscription(pool, owner.id);
      return {
        json: sub,
        text: sub ? `${sub.plan} (${sub.status}) since ${sub.period_start.toISOString()}` : 'no subscription',
      };
    }
    case 'servers add': {
      const ownerId =
        typeof options.owner === 'string' ? (await existingOwner(pool, options.owner)).id : null;
      const server = await upsertServer(pool, { id: required(options, 'id'), ownerId });
      return {
        json: server,
        text: `server ${server.id} ${ownerId ? `belongs to ${ownerId}` : 'is in the shared pool'}`,
      };
    }
    case 'servers list': {
      const servers = await listServers(pool);
      return {
        json: servers,
        text:
          servers.map((s) => `${s.id}  ${s.owner_id ?? 'shared'}  ${s.status}`).join('\n') || 'no servers',
      };
    }
    case 'servers remove': {
      const removed = await deleteServer(pool, required(options, 'id'));
      if (!removed) throw new UsageError(`no server ${options.id}`);
      return { json: { removed: options.id }, text: `removed server ${options.id}` };
    }
    case 'analytics page-views': {
      const days = count(options, 'days', 7);
      const views = await countPageViews(
        pool,
        new Date(Date.now() - days * 86_400_000),
        count(options, 'limit', 50),
      );
      return {
        json: views,
        text:
          views.map((v) => `${String(v.views).padStart(7)}  ${v.path}`).join('\n') ||
          `no page views in ${days} days`,
      };
    }
    case 'tasks failed': {
      const from = since(options);
      const tasks = await listFailedTasks(pool, {
        since: from,
        pipeline: typeof options.pipeline === 'string' ? options.pipeline : null,
        limit: count(options, 'limit', 50),
      });
      return {
        json: tasks,
        text: tasks.map(failedLines).join('\n') || `no failed tasks since ${from.toISOString()}`,
      };
    }
    case 'migrate': {
      // Opening the database applied what was pending, under the migration lock: this answers
      // the schema as it now is (a rolling upgrade runs it as a one-off job before the new pods).
      const applied = await listAppliedMigrations(pool);
      return {
        json: applied.map((m) => ({ name: m.name, applied_at: m.applied_at })),
        text: `${applied.length} migrations applied, the latest ${applied.at(-1)?.name ?? 'none'}`,
      };
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

async function requeue(pool: Pool, ids: readonly string[]): Promise<{ json: unknown; text: string }> {
  if (ids.length === 0) throw new UsageError('tasks requeue takes the ids of the tasks to queue again');
  const malformed = ids.filter((id) => !isUuid(id));
  if (malformed.length > 0) throw new UsageError(`not a task id: ${malformed.join(', ')}`);
  const requeued = await requeueFailedTasks(pool, ids);
  const left = ids.filter((id) => !requeued.includes(id));
  const lines = [`requeued ${requeued.length} task(s)`];
  if (left.length > 0)
    lines.push(`not requeued (no such task, not failed, cancelled, or a model task): ${left.join(', ')}`);
  return { json: { requeued, not_requeued: left }, text: lines.join('\n') };
}
