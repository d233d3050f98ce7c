import type { Queryable } from '@imagegen/db';

/**
 * Serialises one owner's redeliveries until the transaction ends, so two requests at once cannot
 * both count the same allowance left (redeliverDelivery counts, then records). A statement of its
 * own: the counting statement's snapshot must be taken after the lock is held.
 */
export async function lockOwnerRedeliveries(db: Queryable, ownerId: string): Promise<void> {
  await db.query({
    name: 'lockOwnerRedeliveries',
    text: `SELECT pg_advisory_xact_lock(hashtextextended('webhook_redeliveries:' || $1::text, 0))`,
    values: [ownerId],
  });
}
