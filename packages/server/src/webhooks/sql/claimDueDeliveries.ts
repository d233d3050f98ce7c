import { fromStored, type Queryable } from '@imagegen/db';

export interface ClaimedDelivery {
  id: string;
  owner_id: string;
  url: string;
  payload: string;
  /** The number of this attempt (1 for the first). */
  attempts: number;
  /** The owner's Standard Webhooks secret as it is now (it may have been rotated). */
  webhook_secret: string;
  task_id: string | null;
  /** The request id of the submission that created the task, for the dispatcher's log lines. */
  request_id: string | null;
}

/**
 * Claims due deliveries for one attempt each. SKIP LOCKED lets several dispatchers share the
 * outbox; pushing next_attempt_at past the lease means a dispatcher that dies mid-attempt leaves
 * the row to fall due again.
 *
 * A task's calls arrive in the order they were made (start, progress..., completed): a delivery
 * waits while an earlier one of its task has not finished its first attempt. Once that attempt
 * failed, the later ones go ahead rather than wait out its retries.
 */
export async function claimDueDeliveries(
  db: Queryable,
  params: { limit: number; leaseMs: number },
): Promise<ClaimedDelivery[]> {
  const result = await db.query<ClaimedDelivery>({
    name: 'claimDueWebhookDeliveries',
    // The CTE is evaluated once (a locking SELECT is never inlined), so each claimed row is
    // exactly one of those this statement locked.
    text: `WITH due AS (
             SELECT id FROM webhook_deliveries w
             WHERE state = 'pending' AND next_attempt_at <= now()
               AND NOT EXISTS (
                 SELECT 1 FROM webhook_deliveries e
                 WHERE e.task_id = w.task_id AND e.state = 'pending'
                   AND e.last_status IS NULL AND e.last_error IS NULL
                   AND (e.created_at, e.id) < (w.created_at, w.id)
               )
             ORDER BY next_attempt_at
             LIMIT $1
             FOR UPDATE SKIP LOCKED
           )
           UPDATE webhook_deliveries d
           SET attempts = d.attempts + 1,
               next_attempt_at = now() + make_interval(secs => $2::double precision / 1000)
           FROM due, owners o
           WHERE d.id = due.id AND o.id = d.owner_id
           RETURNING d.id, d.owner_id, d.url, d.payload, d.attempts, o.webhook_secret, d.task_id,
             (SELECT t.request_id FROM tasks t WHERE t.id = d.task_id) AS request_id`,
    values: [params.limit, params.leaseMs],
  });
  return fromStored(result.rows);
}
