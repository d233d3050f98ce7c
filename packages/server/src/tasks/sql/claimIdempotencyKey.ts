import type { Queryable } from '@imagegen/db';

/**
 * Takes the owner's Idempotency-Key for a new task, or answers false when a submission of the last
 * 24 hours holds it. A concurrent submission with the same key waits here until the first one
 * commits (the primary key), then finds it held: concurrent duplicates make one task. A key older
 * than 24 hours is taken over.
 */
export async function claimIdempotencyKey(
  db: Queryable,
  params: { ownerId: string; key: string; requestHash: string; taskId: string },
): Promise<boolean> {
  const result = await db.query({
    name: 'claimIdempotencyKey',
    text: `INSERT INTO idempotency_keys (owner_id, idempotency_key, request_hash, task_id)
           VALUES ($1, $2, $3, $4)
           ON CONFLICT (owner_id, idempotency_key) DO UPDATE
             SET request_hash = EXCLUDED.request_hash, task_id = EXCLUDED.task_id, created_at = now()
             WHERE idempotency_keys.created_at < now() - interval '24 hours'`,
    values: [params.ownerId, params.key, params.requestHash, params.taskId],
  });
  return result.rowCount === 1;
}
