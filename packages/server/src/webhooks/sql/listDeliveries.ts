import { fromStored, type Queryable } from '@imagegen/db';

export interface DeliveryRow {
  id: string;
  task_id: string | null;
  event: 'start' | 'progress' | 'completed';
  state: 'pending' | 'delivered' | 'failed';
  created_at: Date;
  /** created_at in whole microseconds (text: beyond a double's exact range): the next page's cursor. */
  created_us: string;
  /** Oldest first; `started_ms` is epoch milliseconds. */
  attempts: {
    attempt: number;
    started_ms: number;
    duration_ms: number;
    status_code: number | null;
    error: string | null;
  }[];
}

/**
 * An owner's deliveries, newest first, with their attempts (the owner's own rows only: another
 * owner's task id lists nothing), a page at a time: the page starts after `after` by
 * (created_at, id). The owner index serves the listing, the task index the filter.
 */
export async function listDeliveries(
  db: Queryable,
  /** `taskId`: only that task's; `id`: only that delivery. */
  params: {
    ownerId: string;
    taskId: string | null;
    id?: string;
    after?: { createdUs: string; id: string } | null;
    limit: number;
  },
): Promise<DeliveryRow[]> {
  const result = await db.query<DeliveryRow>({
    name: 'listWebhookDeliveries',
    text: `SELECT d.id, d.task_id, d.event, d.state, d.created_at,
             (extract(epoch from d.created_at) * 1000000)::bigint::text AS created_us,
             coalesce((
               SELECT json_agg(json_build_object(
                        'attempt', a.attempt,
                        'started_ms', floor(extract(epoch from a.started_at) * 1000),
                        'duration_ms', a.duration_ms,
                        'status_code', a.status_code,
                        'error', a.error) ORDER BY a.attempt)
               FROM webhook_attempts a WHERE a.delivery_id = d.id
             ), '[]'::json) AS attempts
           FROM webhook_deliveries d
           WHERE d.owner_id = $1 AND ($2::uuid IS NULL OR d.task_id = $2) AND ($4::uuid IS NULL OR d.id = $4)
             AND (d.created_at, d.id) < (
               coalesce(timestamptz 'epoch' + $5::bigint * interval '1 microsecond', 'infinity'),
               coalesce($6::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
           ORDER BY d.created_at DESC, d.id DESC
           LIMIT $3`,
    values: [
      params.ownerId,
      params.taskId,
      params.limit,
      params.id ?? null,
      params.after?.createdUs ?? null,
      params.after?.id ?? null,
    ],
  });
  return fromStored(result.rows);
}
