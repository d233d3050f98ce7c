import type { Queryable } from '@imagegen/db';

/** Cancels the owner's active subscriptions, so a new one becomes the current one alone. */
export async function endSubscriptions(db: Queryable, ownerId: string): Promise<number> {
  const result = await db.query({
    name: 'endSubscriptions',
    text: `UPDATE subscriptions SET status = 'cancelled', period_end = LEAST(COALESCE(period_end, now()), now())
            WHERE owner_id = $1 AND status = 'active'`,
    values: [ownerId],
  });
  return result.rowCount ?? 0;
}
