import { CANCELLED_ERROR } from '@imagegen/contract';
import { inTransaction, isUuid, type Pool } from '@imagegen/db';
import { getTaskForOwner } from './read.ts';
import { type FailureContext, settleFailure } from './settle-task.ts';
import { cancelTask as cancelTaskRow } from './sql/cancelTask.ts';
import { toTaskRecord } from './sql/task-row.ts';
import type { BlobStore, TaskRecord } from './types.ts';

export type CancelOutcome =
  /** The task was queued or running and is now FAILURE, cancelled by the caller. */
  | { readonly outcome: 'cancelled'; readonly task: TaskRecord }
  /** The task had already ended (succeeded, failed or cancelled): nothing changed. */
  | { readonly outcome: 'ended'; readonly task: TaskRecord }
  /** No such task for this owner (a malformed id, another owner's id alike). */
  | { readonly outcome: 'missing' };

export interface CancelParams extends FailureContext {
  readonly ownerId: string;
  readonly id: string;
  readonly store: BlobStore;
}

/**
 * Cancels a queued or running task, in one transaction with what every final failure writes (its
 * model row fails, its webhook is queued, once). A worker running the task hears of the cancel on
 * the change feed (task-events.ts) and aborts its engine; whatever it stores afterwards it removes
 * itself (settle-task.ts). The links queued_image_urls handed out are removed here too, in case
 * the worker had already filled them: a cancelled task's outputs are never served.
 */
export async function cancelTask(pool: Pool, params: CancelParams): Promise<CancelOutcome> {
  const { ownerId, id } = params;
  if (!isUuid(id)) return { outcome: 'missing' };
  const cancelled = await inTransaction(pool, async (client) => {
    const row = await cancelTaskRow(client, { id, ownerId, error: CANCELLED_ERROR });
    if (!row) return null;
    const task = toTaskRecord(row);
    await settleFailure(params, client, task);
    return task;
  });
  if (cancelled) {
    await Promise.all(cancelled.outputKeys.map((key) => params.store.delete(key)));
    return { outcome: 'cancelled', task: cancelled };
  }
  const task = await getTaskForOwner(pool, ownerId, id);
  return task ? { outcome: 'ended', task } : { outcome: 'missing' };
}
