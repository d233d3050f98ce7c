import { type Queryable, toStored } from '@imagegen/db';

export interface AttemptOutcome {
  deliveryId: string;
  ownerId: string;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  /** delivered, failed (gave up), or pending with the delay before the next attempt. */
  next: { state: 'delivered' } | { state: 'failed' } | { state: 'pending'; delayMs: number };
}

/**
 * Attempts kept per delivery, the newest: a whole retry schedule (18) and a few redeliveries
 * after it. Older ones are removed as new ones are recorded, so no delivery's record (and no
 * page of GET /webhooks/v1/deliveries) grows with the redeliveries asked of it.
 */
export const ATTEMPTS_KEPT = 25;

/**
 * Records one attempt and moves the delivery on, in one statement, removing the delivery's
 * attempts older than the newest ATTEMPTS_KEPT. It only applies while the
 * row still carries this attempt's number: if the lease ran out and another dispatcher claimed
 * the row again, this late outcome is recorded but does not overwrite the newer attempt's state.
 */
export async function finishAttempt(db: Queryable, outcome: AttemptOutcome): Promise<void> {
  const delayMs = outcome.next.state === 'pending' ? outcome.next.delayMs : 0;
  await db.query({
    name: 'finishWebhookAttempt',
    text: `WITH recorded AS (
             INSERT INTO webhook_attempts (delivery_id, owner_id, attempt, started_at, duration_ms,
                                           status_code, error, response_excerpt)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (delivery_id, attempt) DO NOTHING
           ), pruned AS (
             DELETE FROM webhook_attempts WHERE delivery_id = $1 AND attempt <= $3 - $11::int
           )
           UPDATE webhook_deliveries
           SET state = $9,
               next_attempt_at = CASE WHEN $9 = 'pending'
                                      THEN now() + make_interval(secs => $10::double precision / 1000)
                                      ELSE next_attempt_at END,
               finished_at = CASE WHEN $9 = 'pending' THEN NULL ELSE now() END,
               last_status = $6,
               last_error = $7
           WHERE id = $1 AND attempts = $3 AND state = 'pending'`,
    values: [
      outcome.deliveryId,
      outcome.ownerId,
      outcome.attempt,
      outcome.startedAt,
      Math.round(outcome.durationMs),
      outcome.statusCode,
      toStored(outcome.error),
      toStored(outcome.responseExcerpt),
      outcome.next.state,
      delayMs,
      ATTEMPTS_KEPT,
    ],
  });
}
