import type { Queryable } from '@imagegen/db';
import type { SubscriptionRow } from './insertSubscription.ts';

/** The owner's subscriptions, newest first: the active one and those that ended, at most `limit`. */
export async function listSubscriptions(
  db: Queryable,
  ownerId: string,
  limit: number,
): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<SubscriptionRow>({
    name: 'listSubscriptions',
    text: `SELECT id, owner_id, plan, status, pod_id, pod_status, period_start, period_end
             FROM subscriptions WHERE owner_id = $1
            ORDER BY created_at DESC, id DESC LIMIT $2`,
    values: [ownerId, limit],
  });
  return rows;
}
