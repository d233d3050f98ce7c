import type { Queryable } from '@imagegen/db';

export interface IdempotencyKeyRow {
  request_hash: string;
  task_id: string;
}

/** What the owner's key was used for: the request it came with and the task that request created. */
export async function getIdempotencyKey(
  db: Queryable,
  ownerId: string,
  key: string,
): Promise<IdempotencyKeyRow | null> {
  const result = await db.query<IdempotencyKeyRow>({
    name: 'getIdempotencyKey',
    text: 'SELECT request_hash, task_id FROM idempotency_keys WHERE owner_id = $1 AND idempotency_key = $2',
    values: [ownerId, key],
  });
  return result.rows[0] ?? null;
}
