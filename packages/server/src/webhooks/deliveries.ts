import { inTransaction, isUuid, type Pool, type Queryable } from '@imagegen/db';
import { readCursor, writeCursor } from '../records/page-cursor.ts';
import { DEFAULT_REDELIVERY_LIMITS, type RedeliveryLimits } from './redelivery-limits.ts';
import { type DeliveryRow, listDeliveries } from './sql/listDeliveries.ts';
import { lockOwnerRedeliveries } from './sql/lockOwnerRedeliveries.ts';
import { type RedeliverOutcome, redeliverDelivery } from './sql/redeliverDelivery.ts';

/** A delivery as /webhooks/v1/deliveries answers it (the contract's WebhookDelivery). */
export interface DeliveryAnswer {
  id: string;
  task_id: string | null;
  event: DeliveryRow['event'];
  status: DeliveryRow['state'];
  created_at: string;
  attempts: {
    attempt: number;
    started_at: string;
    duration_ms: number;
    status_code: number | null;
    error: string | null;
  }[];
}

/**
 * An owner's deliveries, newest first, a page at a time (each with at most its newest
 * ATTEMPTS_KEPT attempts, so a page is bounded whatever was asked of them); `next_cursor` reads
 * the next page, null on the last. A task id that is not one lists nothing, as a missing one. A
 * cursor no page handed out throws InvalidCursorError.
 */
export async function ownerDeliveries(
  db: Queryable,
  params: { ownerId: string; taskId?: string; limit: number; cursor?: string },
): Promise<{ deliveries: DeliveryAnswer[]; next_cursor: string | null }> {
  const after = params.cursor === undefined ? null : readCursor(params.cursor);
  if (params.taskId !== undefined && !isUuid(params.taskId)) return { deliveries: [], next_cursor: null };
  const rows = await listDeliveries(db, {
    ownerId: params.ownerId,
    taskId: params.taskId ?? null,
    after,
    // One more than the page: whether a next page exists, without counting.
    limit: params.limit + 1,
  });
  const page = rows.slice(0, params.limit);
  const last = page.at(-1);
  return {
    deliveries: page.map(toDeliveryAnswer),
    next_cursor: rows.length > params.limit && last ? writeCursor(last.created_us, last.id) : null,
  };
}

/**
 * Sends one of the owner's deliveries again, and answers it as it stands then; 'missing' when the
 * owner has no such delivery (an id that is not one included), 'pending' when it has not
 * finished yet (one redelivery in flight at a time), or the allowance used up
 * (WEBHOOK_REDELIVERIES_PER_DELIVERY, _PER_MINUTE) with the seconds to wait.
 */
export async function redeliver(
  pool: Pool,
  params: { ownerId: string; id: string; limits?: RedeliveryLimits },
): Promise<DeliveryAnswer | Exclude<RedeliverOutcome, { kind: 'redelivered' }>> {
  if (!isUuid(params.id)) return { kind: 'missing' };
  const limits = params.limits ?? DEFAULT_REDELIVERY_LIMITS;
  const outcome = await inTransaction(pool, async (client) => {
    await lockOwnerRedeliveries(client, params.ownerId);
    return redeliverDelivery(client, { ownerId: params.ownerId, id: params.id, ...limits });
  });
  if (outcome.kind !== 'redelivered') return outcome;
  const [row] = await listDeliveries(pool, {
    ownerId: params.ownerId,
    taskId: null,
    id: params.id,
    limit: 1,
  });
  return row ? toDeliveryAnswer(row) : { kind: 'missing' };
}

function toDeliveryAnswer(row: DeliveryRow): DeliveryAnswer {
  return {
    id: row.id,
    task_id: row.task_id,
    event: row.event,
    status: row.state,
    created_at: row.created_at.toISOString(),
    attempts: row.attempts.map((attempt) => ({
      attempt: attempt.attempt,
      started_at: new Date(attempt.started_ms).toISOString(),
      duration_ms: attempt.duration_ms,
      status_code: attempt.status_code,
      error: attempt.error,
    })),
  };
}
