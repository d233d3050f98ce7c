import { randomInt, randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from '@imagegen/db';
import { allocateOutputKeys, downloadUrl, fileKeysLinkedFrom } from '../storage/blob-keys.ts';
import { Batcher, type Pending } from './batcher.ts';
import { type Route, resolveRoute } from './routing.ts';
import { insertTasks, type NewTaskRow } from './sql/insertTasks.ts';
import { announceTasks } from './task-notifications.ts';
import type { SubmitTaskParams, SubmittedTask } from './types.ts';

const DEFAULT_MAX_ATTEMPTS = 3;
/** Rows per INSERT: large enough for any burst, small enough to keep one statement quick. */
const MAX_GROUP = 256;
/**
 * INSERTs in flight at once. The INSERT does not notify (0006_submit_without_notify.sql), so the
 * lanes' commits overlap and PostgreSQL flushes them to disk together: while one lane waits on
 * the disk, the other executes. More lanes make smaller groups, and each group costs a statement,
 * a commit and a lock on the owner's row (the foreign key; concurrent ones become a MultiXact),
 * so on 2 cores more than two lanes cost more CPU per task than they save in waiting.
 */
const LANES = 2;

/** A seed for `seed: -1`: recorded in the task, so retries and reruns draw the same image. */
export function drawSeed(): number {
  return randomInt(0, 2 ** 32);
}

/**
 * Queues a task. Returns once the task row is committed (durable); the workers are woken by a
 * notification sent after the commit (`announceTasks`, one per burst of commits).
 *
 * Concurrent submissions through one pool share a statement: while the lanes are busy the next
 * ones gather, then go as one multi-row INSERT (one round trip, one commit). Under load this
 * turns 64 commits into a few; alone, a submission goes at once.
 */
export async function submitTask(pool: Pool, params: SubmitTaskParams): Promise<SubmittedTask> {
  const route = resolveRoute(pool, params.ownerId, params.input.server_id);
  const { row, submitted } = prepareTask(params, route instanceof Promise ? await route : route);
  await groupFor(pool).add(row);
  return submitted;
}

/**
 * Queues a task inside the caller's transaction, with rows that must commit together with it
 * (a model task's model row). The caller wakes the workers after the commit (`announceTasks`).
 */
export async function queueTaskIn(client: PoolClient, params: SubmitTaskParams): Promise<SubmittedTask> {
  const { row, submitted } = prepareTask(
    params,
    await resolveRoute(client, params.ownerId, params.input.server_id),
  );
  await insertTasks(client, [row]);
  return submitted;
}

/**
 * The row a submission inserts and the answer its submitter gets: on the route its `server_id`
 * allows (`resolveRoute`: RoutingError otherwise), with the seed drawn for `seed: -1` and the
 * pre-allocated output keys of `queued_image_urls`.
 */
function prepareTask(params: SubmitTaskParams, route: Route): { row: NewTaskRow; submitted: SubmittedTask } {
  const input: Record<string, unknown> = { ...params.input };
  let seed: number | undefined;
  if ('seed' in input) {
    seed = typeof input.seed === 'number' && input.seed >= 0 ? input.seed : drawSeed();
    input.seed = seed;
  }
  let outputKeys: string[] = [];
  if (input.queued_image_urls === true) {
    const samples = typeof input.samples === 'number' && input.samples > 0 ? input.samples : 1;
    outputKeys = allocateOutputKeys(samples, input.file_prefix);
  }
  const id = params.id ?? randomUUID();
  const row: NewTaskRow = {
    id,
    owner_id: params.ownerId,
    endpoint: params.endpoint,
    kind: params.kind,
    input,
    target_server: route.targetServer,
    target_pool: route.targetPool,
    batch_id: typeof input.batch_id === 'string' && input.batch_id !== '' ? input.batch_id : null,
    max_attempts: params.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    output_keys: outputKeys,
    input_keys: fileKeysLinkedFrom(input, params.publicUrl),
    request_id: params.requestId ?? null,
    ...(params.cancelAfter
      ? { cancel_after: params.cancelAfter.text, cancel_after_ms: params.cancelAfter.ms }
      : {}),
  };
  const submitted: SubmittedTask = {
    id,
    ...(seed === undefined ? {} : { seed }),
    ...(outputKeys.length > 0
      ? { outputUrls: outputKeys.map((key) => downloadUrl(params.publicUrl, key)) }
      : {}),
  };
  return { row, submitted };
}

/**
 * One multi-row INSERT per batch. A failed batch is retried row by row, so one bad row (a foreign
 * key, a constraint) fails only its own submission, not its neighbours.
 */
async function insertBatch(pool: Pool, batch: Pending<NewTaskRow, void>[]): Promise<void> {
  try {
    await insertTasks(
      pool,
      batch.map((pending) => pending.item),
    );
  } catch (error) {
    if (batch.length === 1) throw error;
    await Promise.all(
      batch.map((pending) => insertTasks(pool, [pending.item]).then(() => pending.resolve(), pending.reject)),
    );
    announceTasks(pool);
    return;
  }
  announceTasks(pool);
  for (const pending of batch) pending.resolve();
}

const groups = new WeakMap<Pool, Batcher<NewTaskRow, void>>();

function groupFor(pool: Pool): Batcher<NewTaskRow, void> {
  let group = groups.get(pool);
  if (!group) {
    group = new Batcher({ lanes: LANES, maxBatch: MAX_GROUP, run: (batch) => insertBatch(pool, batch) });
    groups.set(pool, group);
  }
  return group;
}
