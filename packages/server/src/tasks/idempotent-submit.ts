import { createHash, randomUUID } from 'node:crypto';
import { inTransaction, type Pool } from '@imagegen/db';
import { downloadUrl } from '../storage/blob-keys.ts';
import { queueTaskAndRowsIn } from './models/submit-model-task.ts';
import { getTaskForOwner } from './read.ts';
import { claimIdempotencyKey } from './sql/claimIdempotencyKey.ts';
import { getIdempotencyKey } from './sql/getIdempotencyKey.ts';
import { announceTasks } from './task-notifications.ts';
import type { SubmitTaskParams, SubmittedTask, TaskRecord } from './types.ts';

/** The key was used in the last 24 hours with another request (another body or another path). */
export class IdempotencyKeyReusedError extends Error {
  override readonly name = 'IdempotencyKeyReusedError';
  constructor() {
    super(
      'this Idempotency-Key was used in the last 24 hours with a different request: send that ' +
        'request again to get its task, or use a new key for a new request',
    );
  }
}

export interface IdempotentSubmission {
  readonly submitted: SubmittedTask;
  /** True when the key was already used: `submitted` is the task the first request created. */
  readonly replayed: boolean;
}

/**
 * Queues a task under the owner's Idempotency-Key, or answers the task an earlier request with
 * the same key and the same request created (within 24 hours). The key is taken in the task's own
 * transaction, before the task is written: two submissions with one key at the same moment queue
 * one task, the second answers it. The same key with a different request throws
 * IdempotencyKeyReusedError; refusals (routing, a missing model) leave the key free.
 */
export async function submitIdempotent(
  pool: Pool,
  params: Omit<SubmitTaskParams, 'id'>,
  key: string,
): Promise<IdempotentSubmission> {
  const requestHash = hashRequest(params.endpoint, params.input);
  const id = randomUUID();
  const answer = await inTransaction(pool, async (client): Promise<IdempotentSubmission> => {
    const claimed = await claimIdempotencyKey(client, {
      ownerId: params.ownerId,
      key,
      requestHash,
      taskId: id,
    });
    if (claimed) return { submitted: await queueTaskAndRowsIn(client, { ...params, id }), replayed: false };
    const used = await getIdempotencyKey(client, params.ownerId, key);
    if (!used || used.request_hash !== requestHash) throw new IdempotencyKeyReusedError();
    const task = await getTaskForOwner(client, params.ownerId, used.task_id);
    if (!task) throw new IdempotencyKeyReusedError();
    return { submitted: submittedAnswer(task, params.publicUrl), replayed: true };
  });
  if (!answer.replayed) announceTasks(pool);
  return answer;
}

/** What the first submission of the task answered: its id, its seed, its early links. */
function submittedAnswer(task: TaskRecord, publicUrl: string): SubmittedTask {
  const seed = task.input.seed;
  return {
    id: task.id,
    ...(typeof seed === 'number' ? { seed } : {}),
    ...(task.input.queued_image_urls === true
      ? { outputUrls: task.outputKeys.map((key) => downloadUrl(publicUrl, key)) }
      : {}),
  };
}

/**
 * The request a key stands for: the path and the validated body (defaults filled in), with keys
 * in a fixed order, so a retry that spells the same request differently is still the same one.
 */
function hashRequest(endpoint: string, input: Readonly<Record<string, unknown>>): string {
  return createHash('sha256')
    .update(canonicalJson([endpoint, input]))
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
