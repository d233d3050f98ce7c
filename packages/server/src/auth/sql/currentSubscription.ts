import type { Queryable } from '@imagegen/db';
import type { SubscriptionRow } from './insertSubscription.ts';

/** The owner's newest subscription (active first), or null. */
export async function currentSubscription(db: Queryable, ownerId: string): Promise<SubscriptionRow | null> {
  const { rows } = await db.query<SubscriptionRow>({
    name: 'currentSubscription',
    text: `SELECT id, owner_id, plan, status, pod_id, pod_status, period_start, period_end
             FROM subscriptions WHERE owner_id = $1
            ORDER BY (status = 'active') DESC, created_at DESC LIMIT 1`,
    values: [ownerId],
  });
  return rows[0] ?? null;
}
