import { isUuid, type Queryable } from '@imagegen/db';
import { type DeliveryRow, listDeliveries } from './sql/listDeliveries.ts';
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

/** An owner's deliveries, newest first; a task id that is not one lists nothing, as a missing one. */
export async function ownerDeliveries(
  db: Queryable,
  params: { ownerId: string; taskId?: string; limit: number },
): Promise<DeliveryAnswer[]> {
  if (params.taskId !== undefined && !isUuid(params.taskId)) return [];
  const rows = await listDeliveries(db, {
    ownerId: params.ownerId,
    taskId: params.taskId ?? null,
    limit: params.limit,
  });
  return rows.map(toDeliveryAnswer);
}

/**
 * Sends one of the owner's deliveries again, and answers it as it stands then; null when the owner
 * has no such delivery (an id that is not one included), 'pending' when it has not finished yet.
 */
export async function redeliver(
  db: Queryable,
  params: { ownerId: string; id: string },
): Promise<DeliveryAnswer | Exclude<RedeliverOutcome, 'redelivered'>> {
  if (!isUuid(params.id)) return 'missing';
  const outcome = await redeliverDelivery(db, params);
  if (outcome !== 'redelivered') return outcome;
  const [row] = await listDeliveries(db, { ownerId: params.ownerId, taskId: null, id: params.id, limit: 1 });
  return row ? toDeliveryAnswer(row) : 'missing';
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
